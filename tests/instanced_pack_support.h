#pragma once
// Packed instanced scenes in the tests (tests/test_instanced_pack.cpp, test_scene_motion.cpp): glTF
// files of cubes placed by nodes, packing them, and tracing a packed scene's rays on the host, one
// level (kd_intersect_closest) or two (instance_traverse over a SceneMotion's top level).
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "animation_test_support.h"
#include "common/scene/packed_scene.h"
#include "common/scene/scene_motion.h"
#include "scene-packer/packer.h"

namespace tessera::testing {

// A mesh of a unit cube (12 triangles, 36 unindexed vertices) scaled by `size` around the origin;
// returns the glTF mesh index.
int add_cube_mesh(AnimatedGltf& gltf, float size);
// Makes every node without a parent a root of the file's one scene.
void add_default_scene(AnimatedGltf& gltf);

// OBJ text of three boxes of growing size along x, each its own group ("g part0" ...), whose vertex
// numbers begin at first_vertex (1 + the vertices written before them).
std::string grouped_boxes_obj(int first_vertex);

pack::PackOptions instanced_pack_options(const std::filesystem::path& input, const std::filesystem::path& output);

struct TracedHit {
  bool found = false;
  float t = 0.0f;
  std::array<float, 9> corners{};  // the hit triangle's vertices (object space)
  uint32_t instance = 0xFFFFFFFFu;  // the instance's index in the scene (two-level only)
};

// Rays from a ring of points around `box` towards points inside it, deterministic.
struct HostRay {
  float3 org, dir;
};
std::vector<HostRay> rays_around(const Aabb& box, int count);

std::vector<TracedHit> trace_flat(const PackedScene& scene, const std::vector<HostRay>& rays);
std::vector<TracedHit> trace_instanced(const PackedScene& scene, SceneMotion& motion, const std::vector<HostRay>& rays);

Aabb world_bounds(const PackedScene& scene);

}  // namespace tessera::testing
