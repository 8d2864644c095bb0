#pragma once
// `tessera-bench rays`: primary, shadow and one-bounce diffuse rays of a fixed camera traced by
// the OpenCL kernels, timed with device events (median of the timed passes after a warm-up).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/scene/packed_scene.h"
#include "worker/bench/traversal_stats.h"

namespace tessera::bench {

struct RayKindResult {
  std::string kind;     // primary | shadow | diffuse
  uint64_t rays = 0;    // rays traced in one pass
  double median_ms = 0; // kernel time of one pass (median)
  std::string hits_hash; // XXH64 of the pass's hit records: equal hashes, bit-identical hits
  double mrays_per_second() const { return median_ms > 0 ? rays / (median_ms * 1e3) : 0.0; }
};

struct RayBenchOptions {
  std::string device = "auto";
  uint32_t size = 1024;  // square image
  int passes = 7;        // timed passes (after one warm-up)
  uint32_t local_x = 8, local_y = 8;  // OpenCL work-group shape
  // Work scheduling of the OpenCL kernels (GPU and CPU devices alike):
  //   grid        one work item per pixel, one launch of the whole image (the render kernels' way)
  //   persistent  persistent work-groups taking 8x8 blocks from a global counter
  //               (kernels/render/persistent_groups.h), persistent_groups_per_unit per compute unit
  //   longest-first the grid's work-groups, each timed pass in the order of what they cost in the pass
  //               before, costliest first (kernels/render/ordered_groups.h, worker/render/longest_first.h)
  std::string schedule = "grid";
  uint32_t persistent_groups_per_unit = 32;
  // longest-first only: the group costs come from one pass of each kind from the view turned this many
  // degrees about the vertical axis (a head turned since the last frame), and every timed pass keeps
  // that order. Unset: each timed pass takes the costs of the pass before it.
  std::optional<float> costs_from_yaw_degrees;
  // longest-first only: PNG pictures of what each group cost in the last timed pass, one a kind of ray,
  // at <cost_map>-<scene file stem>-primary.png, -shadow.png, -diffuse.png (empty: none).
  std::string cost_map;
  // Order of the diffuse bounces: pixel (as generated) or octant (each work-group of
  // sort_local_x x sort_local_y pixels sorts its rays by direction octant first, inside the timed kernel).
  std::string diffuse_order = "pixel";
  uint32_t sort_local_x = 16, sort_local_y = 16;
  // Where the timed kernels take their rays: generated (each work item makes its pixel's ray, so the
  // time includes it) or stored (an untimed kernel writes the rays to a buffer first and the timed
  // kernel only reads and traces them, as batch kernels of other tracers do; OpenCL devices, grid
  // schedule, pixel order). The same rays and hits either way.
  std::string rays = "generated";
  // Which pixels cast a shadow ray: all (every pixel with a primary hit) or facing (only those whose
  // surface faces the light, the rays the renderers cast; kernels/integrators/bench_rays.h).
  std::string shadow_rays = "all";
  SceneMemory scene_memory = SceneMemory::fast;  // how the scene lies in device memory (common/scene/scene_memory.h)
  bool stats = false;    // count traversal steps per ray on the host (worker/bench/traversal_stats.h)
  bool embree = true;    // trace the same rays with Embree on the CPU, where built in
  unsigned embree_threads = 0;
};

struct RayBenchResult {
  std::string scene;        // file name
  std::string configuration;  // quantization and kd-tree variant (and node layout on OpenCL devices)
  std::string ray_source = "generated";  // RayBenchOptions::rays
  std::string shadow_rays = "all";       // RayBenchOptions::shadow_rays
  std::string schedule;                  // RayBenchOptions::schedule on OpenCL devices
  std::optional<float> costs_from_yaw_degrees;  // RayBenchOptions::costs_from_yaw_degrees
  std::vector<std::string> cost_maps;           // the pictures RayBenchOptions::cost_map wrote
  std::string kd_layout;      // OpenCL devices: TESSERA_KD_LAYOUT (dfs, blocked, blocked64)
  std::string scene_memory = "fast";  // RayBenchOptions::scene_memory
  // Triangles, vertices, kd-tree on the device (DeviceScene::mesh_tree_bytes; on the host backend
  // what an OpenCL device with the default node layout would hold), and every scene buffer.
  double mesh_tree_bytes_per_triangle = 0.0;
  uint64_t scene_device_bytes = 0;
  std::string device;
  std::vector<RayKindResult> kinds;
  std::vector<RayKindResult> embree;  // empty without Embree
  std::string embree_note;
  std::vector<TraversalStats> stats;  // with RayBenchOptions::stats
};

RayBenchResult run_ray_bench(const std::string& scene_path, const RayBenchOptions& options);

// The shadow row from a pass's occlusion records, one a pixel (2: the pixel cast no ray): the rays
// cast and the records' hash.
RayKindResult shadow_kind_result(const std::vector<uint32_t>& occluded, double median_ms);

// Where RayBenchOptions::cost_map puts the picture of one scene's kind of ray ("primary", "shadow",
// "diffuse"): <cost_map>-<scene file stem>-<kind>.png.
std::string cost_map_path(const RayBenchOptions& options, const std::string& scene_path, const std::string& kind);
nlohmann::json to_json(const RayBenchResult& result);
// Embree is linked in (tessera-bench only).
bool embree_available();

}  // namespace tessera::bench
