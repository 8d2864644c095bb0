#pragma once
// The `vct` render mode (voxel cone tracing, papers/001 ch. 4) on one machine: a VctRenderer holds a
// packed scene and its voxel grid, built once when the renderer is made (voxelization, direct light by
// shadow rays through the kd-tree, mip levels) and relit -- never voxelized again -- when the lights
// change. An instanced scene's grid is voxelized in world space and updated when its instances move
// (place_instances, worker/render/vct_instances.h): only the region they touched, or all of it. Tiles
// are then rendered one at a time (render_tile) or a worker's batch at once (render_tiles).
// Two backends share the kernels/vct code: OpenCL (GPU, or PoCL on the CPU) and the host build.
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/image/image.h"
#include "common/render/vct_options.h"
#include "kernels/device/cpu/vct_cpu.h"
#include "worker/render/tile_renderer.h"

namespace tessera {

// Milliseconds of the steps of a build or relight (device time from profiling events on OpenCL,
// wall time on the host). The thesis's V (voxelization, with the direct light) is voxelize_ms().
struct VctStepTimes {
  double structure_ms = 0;   // surface fragments -> brick masks, mip structure, bricks, active-voxel lists
  double fill_ms = 0;        // filled (solid) voxelization, when asked for
  double attributes_ms = 0;  // fragments again -> albedo, normal, plane of every level-0 voxel
  double light_ms = 0;       // direct light of the active voxels (shadow rays through the kd-tree)
  double mips_ms = 0;        // mip levels from the active-voxel lists
  double voxelize_ms() const { return structure_ms + fill_ms + attributes_ms + light_ms; }
  double relight_ms() const { return light_ms + mips_ms; }
};

// Voxel counts and the memory the grid occupies.
struct VctGridStats {
  uint32_t resolution = 0, levels = 0;
  float voxel_size = 0;
  std::vector<uint64_t> voxels_per_level, bricks_per_level;
  uint64_t map_bytes = 0, brick_bytes = 0, radiance_bytes = 0, position_bytes = 0, attribute_bytes = 0;
  uint64_t dense_bytes = 0;  // level-0 occupancy masks and dense levels >= 1 (what cones read without indirection)
  uint64_t transient_peak_bytes = 0;  // extra memory during the build (masks, fragment sums), freed after
  uint64_t total_bytes() const {
    return map_bytes + brick_bytes + radiance_bytes + position_bytes + attribute_bytes + dense_bytes;
  }
  // What cone tracing reads: map, bricks and radiance (level 0) and the dense array.
  uint64_t trace_bytes() const { return map_bytes + brick_bytes + radiance_bytes + dense_bytes; }
  uint64_t dense_thesis_bytes() const { return uint64_t(resolution) * resolution * resolution * 4; }  // 4 B a voxel, level 0
};
VctGridStats vct_grid_stats(const VctGridParams& params, uint64_t transient_peak_bytes);

// How a grid follows moved instances: the region they touched (the default; the whole grid where that
// region is over half of it, or the grid is filled) or always the whole grid again. Both give the same
// grid (kernels/device/cpu/vct_update_cpu.h).
enum class VctUpdateMode { incremental, full };

// What one place_instances did.
struct VctUpdateTimes {
  uint32_t moved = 0;         // instances whose transform changed (0: nothing was done)
  bool incremental = false;   // the touched region only (else the whole grid voxelized again)
  uint64_t region_voxels = 0; // level-0 voxels of that region
  uint64_t relit_outside = 0; // voxels outside it whose shadow rays crossed what moved
  VctStepTimes steps;
  double total_ms = 0;        // wall time of the whole update, top level upload included
};

class VctRenderer {
 public:
  virtual ~VctRenderer() = default;
  virtual std::string description() const = 0;
  virtual const VctGridParams& grid_params() const = 0;
  virtual const VctGridStats& grid_stats() const = 0;
  virtual const VctStepTimes& build_times() const = 0;  // of the build when the renderer was made
  virtual const std::vector<VctLight>& lights() const = 0;
  // Relights the active voxels (direct light, then the mip levels) if `lights` differ from the current
  // ones; returns the times of that relight (all zero when nothing changed).
  virtual VctStepTimes set_lights(const std::vector<VctLight>& lights) = 0;
  // Voxelizes the scene again from scratch (same options and lights) and returns the times: what a
  // dynamic scene would pay every frame (papers/001 Table 5.2, rows without an asterisk).
  virtual VctStepTimes revoxelize() = 0;
  // An instanced scene's instances as placed from now on (SceneMotion::top_level()): the grid follows
  // what moved. Nothing for a single-level scene or an unchanged placement.
  virtual VctUpdateTimes place_instances(const TopLevelBvh& top) = 0;
  void set_update_mode(VctUpdateMode mode) { update_mode_ = mode; }
  VctUpdateMode update_mode() const { return update_mode_; }
  // Renders `tile` of the frame `camera` describes: RGBA8 words, tile rows top to bottom.
  virtual void render_tile(const CameraParams& camera, const RenderSettings& settings, const VctFrameSettings& frame,
                           const TileRect& tile, std::span<uint32_t> out) = 0;
  // Renders a batch of tiles, tile t through cameras[t.eye], into `out` at the tiles' offsets:
  // on a GPU in one launch (two with the split kernels) and one readback, elsewhere tile by tile
  // through render_tile; the pixels are render_tile's either way. Checks `stop` between tiles.
  virtual BatchTiming render_tiles(const std::array<CameraParams, 2>& cameras, const RenderSettings& settings,
                                   const VctFrameSettings& frame, std::span<const BatchTile> tiles, std::span<uint32_t> out,
                                   const StopRequested& stop);
  // Device milliseconds of the last render_tile (wall time on the host backend).
  virtual double last_tile_ms() const = 0;
  // Where the tile ran as two kernels (OpenCL: the primary rays, then the shading), their device
  // milliseconds, which last_tile_ms sums; 0 otherwise.
  virtual double last_primary_ms() const { return 0; }
  virtual double last_shade_ms() const { return 0; }
  // The grid copied into host memory (tests, statistics).
  virtual cpu::VctGridData read_grid() const = 0;

 protected:
  VctUpdateMode update_mode_ = VctUpdateMode::incremental;
};

// Builds the grid for `scene` with its own lights (vct_lights_for_scene) unless `lights` are given;
// an instanced scene as packed (time 0), its grid laid around it then. The scene must outlive the renderer.
std::unique_ptr<VctRenderer> make_vct_renderer(const PackedScene& scene, const RendererOptions& renderer,
                                               const VctOptions& options,
                                               const std::optional<std::vector<VctLight>>& lights = std::nullopt);

// A whole frame, tile by tile; progress(done, total) after every tile.
ImageRgba8 render_vct_frame(VctRenderer& renderer, const CameraParams& camera, const RenderSettings& settings,
                            const VctFrameSettings& frame, uint32_t tile_size = 256,
                            const std::function<void(size_t, size_t)>& progress = {});

}  // namespace tessera
