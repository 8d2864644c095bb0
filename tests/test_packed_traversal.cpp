// The packed tree as the kernels see it, for every quantization and every kd-tree variant: the
// traversal over a loaded .tpk finds the same closest hit as brute force over the same decoded
// triangles, and any-hit agrees on whether something is hit. Ray packets (the CPU's coherent
// path) give every lane the hit the ray alone gets.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/scene/packed_scene.h"
#include "kernels/accel/kdtree_packet.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"

namespace tessera {
namespace {

struct BruteHit {
  bool found = false;
  float t = INFINITY;
  uint32_t tri = 0;
};

BruteHit brute_force(const SceneView& view, float3 org, float3 dir) {
  BruteHit best;
  const TriangleRay ray = triangle_ray_setup(org, dir);
  for (uint32_t tri = 0; tri < view.triangle_count; ++tri) {
    float3 p0, p1, p2;
    scene_triangle_vertices(&view, tri, &p0, &p1, &p2);
    float t, u, v;
    if (triangle_intersect(&ray, p0, p1, p2, 0.0f, best.t, &t, &u, &v)) {
      best.found = true;
      best.t = t;
      best.tri = tri;
    }
  }
  return best;
}

void check_scene(const PackedScene& scene, uint32_t seed) {
  const SceneView view = scene.host_view();
  const auto& b = scene.manifest().bounds();
  const float lo[3] = {b.min().x(), b.min().y(), b.min().z()}, hi[3] = {b.max().x(), b.max().y(), b.max().z()};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f), sym(-1.0f, 1.0f);
  int hits = 0;
  for (int i = 0; i < 1500; ++i) {
    float o[3];
    for (int a = 0; a < 3; ++a) {
      const float extent = hi[a] - lo[a];
      o[a] = lo[a] - 0.3f * extent + 1.6f * extent * unit(rng);  // inside and outside the box
    }
    float3 dir = v3_normalize(make_float3(sym(rng), sym(rng), sym(rng)));
    if (i % 2) {  // aimed at a random point of the box, so most of these hit something
      float target[3];
      for (int a = 0; a < 3; ++a) target[a] = lo[a] + (hi[a] - lo[a]) * (0.25f + 0.5f * unit(rng));
      dir = v3_normalize(make_float3(target[0] - o[0], target[1] - o[1], target[2] - o[2]));
    }
    if (i % 10 == 0) dir = make_float3(i % 20 == 0 ? 1.0f : 0.0f, 0.0f, i % 20 == 0 ? 0.0f : -1.0f);  // axis-parallel
    const float3 org = make_float3(o[0], o[1], o[2]);
    const BruteHit expected = brute_force(view, org, dir);
    Hit hit;
    const int found = kd_intersect_closest(&view, org, dir, 0.0f, INFINITY, &hit);
    ASSERT_EQ(bool(found), expected.found) << "ray " << i;
    ASSERT_EQ(bool(kd_intersect_any(&view, org, dir, 0.0f, INFINITY)), expected.found) << "ray " << i;
    if (!found) continue;
    ++hits;
    // Same triangle, or a different one at the same distance (coincident triangles).
    if (hit.tri != expected.tri) EXPECT_NEAR(hit.t, expected.t, 1e-5f * std::max(1.0f, expected.t)) << "ray " << i;
    else EXPECT_EQ(hit.t, expected.t);
  }
  EXPECT_GT(hits, 500) << "too few rays hit anything to test much";
}

// Packets of four rays: coherent ones (a shared origin toward neighbouring targets), packets with
// lanes switched off or with a finite tmax, lanes in the root's split plane whose 1/d overflows, and
// packets whose direction signs differ (traced ray by ray). Every lane must report exactly what kd_traverse reports for that ray.
void check_packets(const PackedScene& scene, uint32_t seed) {
  const SceneView view = scene.host_view();
  const auto& b = scene.manifest().bounds();
  const float lo[3] = {b.min().x(), b.min().y(), b.min().z()}, hi[3] = {b.max().x(), b.max().y(), b.max().z()};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f), sym(-1.0f, 1.0f);
  int hits = 0, coherent = 0;
  const uint32_t root_axis = kd_node_kind(view.kd_nodes[0]);  // 3: the root is a leaf
  const float root_split = ts_as_float(view.kd_nodes[1]);
  for (int p = 0; p < 400; ++p) {
    KdPacket packet;
    float o[3], target[3];
    for (int a = 0; a < 3; ++a) {
      const float extent = hi[a] - lo[a];
      o[a] = lo[a] - 0.3f * extent + 1.6f * extent * unit(rng);
      target[a] = lo[a] + extent * (0.25f + 0.5f * unit(rng));
    }
    const float spread = p % 4 == 3 ? 1.0f : 0.02f;  // every fourth packet points every which way
    for (uint32_t l = 0; l < TS_SIMD_LANES; ++l) {
      float3 d = make_float3(target[0] - o[0], target[1] - o[1], target[2] - o[2]);
      const float len = v3_length(d);
      d = v3_normalize(v3_add(d, v3_scale(make_float3(sym(rng), sym(rng), sym(rng)), spread * len)));
      if (p % 10 == 5 && l == 1) d = make_float3(0.0f, d.y, d.z);  // parallel to the x planes
      packet.org[l] = make_float3(o[0], o[1], o[2]);
      if (p % 10 == 7 && l == 3 && root_axis < 3) {  // in the root's split plane, 1/d overflowing: both sides
        float org[3] = {o[0], o[1], o[2]}, dir[3] = {d.x, d.y, d.z};
        org[root_axis] = root_split;
        dir[root_axis] = std::copysign(1e-40f, dir[root_axis]);
        packet.org[l] = make_float3(org[0], org[1], org[2]);
        d = make_float3(dir[0], dir[1], dir[2]);
      }
      packet.dir[l] = d;
      packet.tmin[l] = 0.0f;
      packet.tmax[l] = p % 5 == 1 ? 0.5f * len : INFINITY;
      if (p % 7 == 2 && l == 2) packet.tmax[l] = -1.0f;  // lane off
    }
    int found[TS_SIMD_LANES], any_found[TS_SIMD_LANES];
    Hit hits4[TS_SIMD_LANES], any_hits[TS_SIMD_LANES];
    kd_traverse_packet(&view, &packet, 0, found, hits4);
    kd_traverse_packet(&view, &packet, 1, any_found, any_hits);
    coherent += spread < 1.0f;
    for (uint32_t l = 0; l < TS_SIMD_LANES; ++l) {
      SCOPED_TRACE("packet " + std::to_string(p) + " lane " + std::to_string(l));
      Hit alone;
      const int expected = kd_intersect_closest(&view, packet.org[l], packet.dir[l], packet.tmin[l], packet.tmax[l], &alone);
      ASSERT_EQ(found[l], expected);
      ASSERT_EQ(any_found[l], expected);
      if (!expected) continue;
      ++hits;
      EXPECT_EQ(hits4[l].tri, alone.tri);
      EXPECT_EQ(hits4[l].t, alone.t);
      EXPECT_EQ(hits4[l].u, alone.u);
      EXPECT_EQ(hits4[l].v, alone.v);
    }
  }
  EXPECT_GT(hits, 400) << "too few rays hit anything to test much";
  EXPECT_GT(coherent, 250);
}

TEST(PackedTraversal, MatchesBruteForceForEveryQuantizationAndVariant) {
  testing::TempDir dir("packed_traversal");
  uint32_t seed = 1;
  for (const char* scene : {"teapot/teapot_lowpoly.obj", "stanford_bunny/bun_zipper_res4.ply"})
    for (int q = 0; q < 4; ++q)
      for (auto variant : {pack::KdVariant::Standard, pack::KdVariant::Choi, pack::KdVariant::Seo}) {
        SCOPED_TRACE(std::string(scene) + " quantization " + std::to_string(q) + " variant " + std::to_string(int(variant)));
        pack::PackOptions o;
        o.input = testing::scene_path(scene);
        o.output = dir / "s.tpk";
        o.quantize = {q >= 1, q >= 2, q >= 3};
        o.kdtree.variant = variant;
        o.show_progress = false;
        o.zstd_level = 1;
        pack::pack_scene(o);
        const PackedScene packed = PackedScene::load(o.output);
        check_scene(packed, seed++);
        check_packets(packed, seed++);
      }
}

}  // namespace
}  // namespace tessera
