// Two-level traversal (kernels/accel/instance_traverse.h over common/scene/top_level_bvh.h): identity
// instances trace the very hits of the flattened scene, moved instances hit like the object packed in
// its place, normals come out in world space, and a thousand instances rebuild within a millisecond.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "common/base/hash.h"
#include "instanced_test_scene.h"

namespace tessera::testing {
namespace {

struct TestRay {
  float3 org, dir;
};

// Rays from points around the box towards points inside it (some parallel to an axis, some from
// inside), so that they meet surfaces at every angle.
std::vector<TestRay> rays_through(const Aabb& box, uint32_t seed, int count) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<TestRay> rays;
  auto point = [&](float margin) {
    float3 p;
    float* c = &p.x;
    for (int a = 0; a < 3; ++a) c[a] = box.min[a] - margin * box.extent(a) + unit(rng) * (1 + 2 * margin) * box.extent(a);
    return p;
  };
  for (int i = 0; i < count; ++i) {
    const float3 from = point(i % 4 == 0 ? 0.0f : 0.7f), to = point(0.0f);
    float3 dir = v3_sub(to, from);
    if (i % 17 == 0) dir = make_float3(0.0f, 0.0f, dir.z);  // parallel to two axes
    if (v3_length(dir) == 0.0f) dir = make_float3(0, 0, 1);
    rays.push_back({from, v3_normalize(dir)});
  }
  return rays;
}

Transform3x4 translation(float x, float y, float z) {
  Transform3x4 t;
  t.m[3] = x, t.m[7] = y, t.m[11] = z;
  return t;
}

const PlainMesh& bunny() {
  static const PlainMesh mesh = load_plain_mesh("stanford_bunny/bun_zipper_res4.obj");
  return mesh;
}
const PlainMesh& teapot() {
  static const PlainMesh mesh = load_plain_mesh("teapot/teapot_lowpoly.obj");
  return mesh;
}

// How near a hit lies to its triangle's edges (0: on one): a ray that close may pick the neighbour
// or miss the silhouette when its ray or vertices round differently.
float edge_distance(const Hit& hit) { return std::min({hit.u, hit.v, 1.0f - hit.u - hit.v}); }
constexpr float kNearEdge = 2e-3f;

// Two traversals of the same surfaces, one with its rays or vertices rounded otherwise, may differ
// only where a ray grazes an edge (the neighbour, or a miss at the silhouette) or where two
// surfaces cross (equal t to rounding; at exactly equal t each takes its lowest triangle index).
bool explained_difference(int found, const Hit& got, int found_flat, const Hit& expected) {
  if (std::min(found_flat ? edge_distance(expected) : 1.0f, found ? edge_distance(got) : 1.0f) < kNearEdge) return true;
  return found && found_flat && std::fabs(got.t - expected.t) <= 1e-5f * std::max(1.0f, expected.t);
}

uint64_t hit_hash(uint64_t h, int found, const Hit& hit) {
  const uint32_t words[4] = {found ? hit.tri : 0xFFFFFFFFu, ts_as_uint(hit.t), ts_as_uint(hit.u), ts_as_uint(hit.v)};
  return hash64(words, sizeof words, h);
}

TEST(InstanceTraverse, IdentityInstancesTraceTheHitsOfTheFlattenedScene) {
  // The teapot moved into the bunny's box as geometry of its own, so that the two objects' boxes overlap.
  const PlainMesh teapot_near = transformed(teapot(), NodeTrs{{0.0f, 0.1f, 0.0f}, {0, 0, 0, 1}, {0.02f, 0.02f, 0.02f}}.matrix());
  const std::vector<PlainMesh> objects{bunny(), teapot_near, transformed(bunny(), translation(0.08f, 0.0f, 0.0f))};
  const InstancedScene instanced =
      make_instanced_scene(objects, {{0, 0, Transform3x4{}}, {1, 1, Transform3x4{}}, {2, 2, Transform3x4{}}});
  const FlatScene flat = make_flat_scene(concatenated(objects));
  ASSERT_EQ(instanced.mesh.triangles, flat.mesh.triangles);

  uint64_t flat_hash = 0, instanced_hash = 0;
  int hits = 0;
  for (const TestRay& ray : rays_through(instanced.top.bounds, 11, 20000)) {
    Hit expected, got;
    uint32_t slot = 0;
    const int found_flat = kd_intersect_closest(&flat.view, ray.org, ray.dir, 0.0f, TS_INFINITY, &expected);
    const int found = instance_traverse(&instanced.view, &instanced.instances, ray.org, ray.dir, 0.0f, TS_INFINITY, 0, &got, &slot);
    ASSERT_EQ(found, found_flat);
    if (found) {
      ++hits;
      ASSERT_EQ(got.tri, expected.tri);
      ASSERT_EQ(ts_as_uint(got.t), ts_as_uint(expected.t));
      ASSERT_EQ(ts_as_uint(got.u), ts_as_uint(expected.u));
      ASSERT_EQ(ts_as_uint(got.v), ts_as_uint(expected.v));
      const uint32_t object = instanced.top.instances[TS_INSTANCE_WORDS * slot + 12];
      EXPECT_GE(got.tri, instanced.object_triangle_base[object]);
    }
    Hit any;
    uint32_t any_slot = 0;
    EXPECT_EQ(instance_traverse(&instanced.view, &instanced.instances, ray.org, ray.dir, 0.0f, TS_INFINITY, 1, &any, &any_slot),
              kd_intersect_any(&flat.view, ray.org, ray.dir, 0.0f, TS_INFINITY));
    flat_hash = hit_hash(flat_hash, found_flat, expected);
    instanced_hash = hit_hash(instanced_hash, found, got);
  }
  EXPECT_GT(hits, 5000);
  EXPECT_EQ(instanced_hash, flat_hash);
}

// A moved, rotated and scaled instance hits what the object packed in that place hits: the same
// triangle at the same t (to rounding), and its normal comes out in world space.
TEST(InstanceTraverse, MovedInstanceHitsLikeTheObjectPackedThere) {
  NodeTrs place{{0.3f, -0.05f, 0.2f}, {0.0f, 0.38268343f, 0.0f, 0.92387953f}, {1.5f, 0.5f, 2.0f}};  // 45° about y
  const Transform3x4 world = place.matrix();
  const InstancedScene instanced = make_instanced_scene({bunny()}, {{0, 0, world}});
  const FlatScene flat = make_flat_scene(transformed(bunny(), world));

  int hits = 0, near_edge = 0;
  for (const TestRay& ray : rays_through(instanced.top.bounds, 12, 20000)) {
    Hit expected, got;
    uint32_t slot = 0;
    const int found_flat = kd_intersect_closest(&flat.view, ray.org, ray.dir, 0.0f, TS_INFINITY, &expected);
    const int found = instance_traverse(&instanced.view, &instanced.instances, ray.org, ray.dir, 0.0f, TS_INFINITY, 0, &got, &slot);
    hits += found;
    if (found != found_flat || (found && got.tri != expected.tri)) {
            ASSERT_TRUE(explained_difference(found, got, found_flat, expected))
          << "found " << found << " / " << found_flat << ", triangle " << got.tri << " / " << expected.tri << ", t "
          << got.t << " / " << expected.t;
      ++near_edge;
      continue;
    }
    if (!found) continue;
    EXPECT_NEAR(got.t, expected.t, 1e-4f * std::max(1.0f, expected.t));
    // the geometric normal of the object-space triangle, carried to world space
    auto corner = [](const PlainMesh& m, uint32_t tri, int k) {
      const uint32_t v = m.triangles[3 * tri + k];
      return make_float3(m.positions[3 * v], m.positions[3 * v + 1], m.positions[3 * v + 2]);
    };
    const float3 n_object = v3_normalize(v3_cross(v3_sub(corner(bunny(), got.tri, 1), corner(bunny(), got.tri, 0)),
                                                  v3_sub(corner(bunny(), got.tri, 2), corner(bunny(), got.tri, 0))));
    const float3 n_world = v3_normalize(v3_cross(v3_sub(corner(flat.mesh, got.tri, 1), corner(flat.mesh, got.tri, 0)),
                                                 v3_sub(corner(flat.mesh, got.tri, 2), corner(flat.mesh, got.tri, 0))));
    EXPECT_GT(v3_dot(instance_normal_to_world(&instanced.instances, slot, n_object), n_world), 0.999f);
  }
  EXPECT_GT(hits, 5000);
  EXPECT_LT(near_edge, 100);  // of 20,000 rays
}

// A grid of moved instances of one object against the copies flattened into one mesh.
TEST(InstanceTraverse, ManyInstancesOfOneObjectHitLikeTheirCopies) {
  std::vector<Instance> placed;
  std::vector<PlainMesh> copies;
  for (int i = 0; i < 16; ++i) {
    const Transform3x4 world = translation(0.125f * (i % 4), 0.0f, 0.125f * (i / 4));
    placed.push_back({0, uint32_t(i), world});
    copies.push_back(transformed(bunny(), world));
  }
  const InstancedScene instanced = make_instanced_scene({bunny()}, placed);
  const FlatScene flat = make_flat_scene(concatenated(copies));
  const uint32_t per_copy = uint32_t(bunny().triangles.size() / 3);
  int hits = 0, near_edge = 0;
  for (const TestRay& ray : rays_through(instanced.top.bounds, 13, 10000)) {
    Hit expected, got;
    uint32_t slot = 0;
    const int found_flat = kd_intersect_closest(&flat.view, ray.org, ray.dir, 0.0f, TS_INFINITY, &expected);
    const int found = instance_traverse(&instanced.view, &instanced.instances, ray.org, ray.dir, 0.0f, TS_INFINITY, 0, &got, &slot);
    hits += found;
    if (found != found_flat || (found && instance_id(&instanced.instances, slot) * per_copy + got.tri != expected.tri)) {
      ASSERT_TRUE(explained_difference(found, got, found_flat, expected))
          << "found " << found << " / " << found_flat << ", triangle " << got.tri << " / " << expected.tri << ", t "
          << got.t << " / " << expected.t;
      ++near_edge;
      continue;
    }
    if (found) {
      EXPECT_NEAR(got.t, expected.t, 1e-4f * std::max(1.0f, expected.t));
    }
  }
  EXPECT_GT(hits, 2000);
  EXPECT_LT(near_edge, 50);  // of 10,000 rays
}

TEST(InstanceTraverse, MovingAnInstanceMovesItsHits) {
  InstancedScene scene = make_instanced_scene({bunny()}, {{0, 0, Transform3x4{}}});
  const float3 org = make_float3(-0.02f, 0.1f, 1.0f), dir = make_float3(0, 0, -1);
  Hit hit;
  uint32_t slot = 0;
  ASSERT_TRUE(instance_traverse(&scene.view, &scene.instances, org, dir, 0.0f, TS_INFINITY, 0, &hit, &slot));
  const float t_before = hit.t;
  scene.place({{0, 0, translation(0.0f, 0.0f, -0.25f)}});
  ASSERT_TRUE(instance_traverse(&scene.view, &scene.instances, org, dir, 0.0f, TS_INFINITY, 0, &hit, &slot));
  EXPECT_NEAR(hit.t, t_before + 0.25f, 1e-5f);
  scene.place({{0, 0, translation(5.0f, 0.0f, 0.0f)}});
  EXPECT_FALSE(instance_traverse(&scene.view, &scene.instances, org, dir, 0.0f, TS_INFINITY, 0, &hit, &slot));
  EXPECT_EQ(slot, TS_NO_INSTANCE);
}

// The worker rebuilds the top level whenever a transform changes: 1,000 instances within 1 ms, and
// the top level costs at most 128 bytes an instance beside the one stored object.
TEST(InstanceTraverse, ThousandInstancesRebuildWithinAMillisecond) {
  const std::vector<Aabb> bounds{Aabb{{-1, -1, -1}, {1, 1, 1}}};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> pos(-100.0f, 100.0f);
  std::vector<Instance> placed;
  for (uint32_t i = 0; i < 1000; ++i)
    placed.push_back({0, i, NodeTrs{{pos(rng), pos(rng), pos(rng)}, {0, 0.6f, 0, 0.8f}, {1, 2, 1}}.matrix()});
  std::vector<double> seconds;
  TopLevelBvh top;
  for (int round = 0; round < 21; ++round) {
    const auto start = std::chrono::steady_clock::now();
    top = build_top_level(placed, bounds, "bench");
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(seconds.begin(), seconds.begin() + 10, seconds.end());
  std::printf("top level of 1000 instances: %.3f ms (median of 21), %.1f bytes an instance, depth %u\n",
              seconds[10] * 1e3, double(top.device_bytes()) / 1000.0, top.depth);
  EXPECT_LT(seconds[10], 1e-3);
  EXPECT_LE(top.device_bytes(), 128u * 1000u);
  EXPECT_LE(top.depth, uint32_t(TS_TLAS_STACK_SIZE));
}

}  // namespace
}  // namespace tessera::testing
