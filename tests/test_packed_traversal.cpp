// The packed tree as the kernels see it, for every quantization and every kd-tree variant: the
// traversal over a loaded .tpk finds the same closest hit as brute force over the same decoded
// triangles, and any-hit agrees on whether something is hit.
#include <gtest/gtest.h>

#include <random>

#include "common/scene/packed_scene.h"
#include "kernels/accel/kdtree_traverse.h"
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
        check_scene(PackedScene::load(o.output), seed++);
      }
}

}  // namespace
}  // namespace tessera
