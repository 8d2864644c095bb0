#pragma once
// `tessera-bench vct SCENE --motion DT`: what keeping an instanced scene's voxel grid up to date costs.
// Two renderers of the same grid follow the scene's animation step by step (DT seconds of scene time a
// step), one updating the region that what moved touched (VctUpdateMode::incremental), the other
// voxelizing the whole grid again (VctUpdateMode::full); each step is timed on both, side by side, and
// at the end the two grids are compared voxel by voxel (they must be equal).
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::bench {

struct VctMotionOptions {
  std::string device = "auto";
  uint32_t grid = 256;
  double step_seconds = 1.0 / 60.0;  // scene time between two updates
  uint32_t steps = 30;               // timed updates (after one warm-up step)
};

// {"scene", "device", "grid", "steps", "incremental": {median_ms, ...}, "full": {...}, "speedup", "grids_equal"}.
nlohmann::json run_vct_motion_bench(const std::string& scene_path, const VctMotionOptions& options);
std::string format_vct_motion_bench(const nlohmann::json& result);

}  // namespace tessera::bench
