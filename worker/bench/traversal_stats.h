#pragma once
// `tessera-bench rays --stats`: what the kd-tree traversal does per ray, counted on the host by the
// very traversal GPUs run (one ray at a time, kernels/accel/kdtree_traverse.h), for the benchmark's
// primary, shadow and diffuse rays. The warp columns group rays as a GPU does: 8 x 4 pixel blocks
// (a 32-wide SIMD group of the 8 x 8 work-groups), where a group runs as long as its longest ray.
#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/scene/packed_scene.h"
#include "kernels/render/camera.h"

namespace tessera::bench {

struct TraversalStats {
  std::string kind;  // primary | shadow | diffuse
  uint64_t rays = 0;
  // Means per ray.
  double nodes = 0, inner = 0, leaves = 0, triangles = 0, pushes = 0, pops = 0;
  double inner_triangles = 0;  // of the triangles: those an inner node holds (tested on the way down)
  // Steps (node loads + triangle tests) of all rays over 32 x the longest ray's steps, per warp:
  // 1 when every lane of a warp works as long as the others.
  double warp_efficiency = 0;
};

// facing_only: shadow rays only where the surface faces the light (RayBenchOptions::shadow_rays).
std::vector<TraversalStats> traversal_stats(const PackedScene& scene, const CameraParams& camera, const std::array<float, 3>& light,
                                            bool facing_only, SceneMemory memory = SceneMemory::fast);
std::string format_traversal_stats(const std::vector<TraversalStats>& stats);
nlohmann::json to_json(const TraversalStats& stats);

}  // namespace tessera::bench
