#pragma once
// The OpenCL backend of the vct mode: the scene and its voxel grid on one device, every buffer created
// through the device-memory budget (so --gpu-mem-limit counts the grid, and refuses it with a list of
// its buffers). Steps and their kernels (kernels/device/opencl/vct.cl):
//   build    vct_voxelize (mark) [+ vct_interior_columns x3, vct_interior_mark] -> vct_parent_masks per level
//            -> vct_count -> (allocate) -> vct_assign -> vct_voxelize (accumulate) -> vct_finalize
//   relight  vct_relight -> vct_mip per level
//   update   (instances moved; worker/render/opencl_vct_update.cpp) vct_update_cells (clear, vct_voxelize mark,
//            parents) -> vct_count -> (allocate) -> vct_assign -> vct_copy_kept -> vct_region_bricks ->
//            vct_voxelize (accumulate) -> vct_finalize_region -> vct_update_light -> vct_dirty_parents,
//            vct_update_mip per level
//   tile     vct_tile_primary -> vct_tile_shade (a surface record a pixel between them), or vct_tile
//            alone for the AO reference output
//   batch    on GPUs the same over a worker's batch of tiles in one launch each: vct_tiles_primary ->
//            vct_tiles_shade, or vct_tiles (CPU devices render a batch tile by tile)
#include <optional>

#include "common/cl/commands.h"
#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/program.h"
#include "worker/render/device_scene.h"
#include "worker/render/vct_instances.h"
#include "worker/render/vct_renderer.h"

namespace tessera {

class OpenClVctRenderer final : public VctRenderer {
 public:
  OpenClVctRenderer(const PackedScene& scene, const std::string& device_spec, std::optional<uint64_t> memory_limit,
                    const VctOptions& options, std::vector<VctLight> lights, SceneMemory scene_memory = SceneMemory::fast);
  std::string description() const override;
  const VctGridParams& grid_params() const override { return params_; }
  const VctGridStats& grid_stats() const override { return stats_; }
  const VctStepTimes& build_times() const override { return build_times_; }
  const std::vector<VctLight>& lights() const override { return lights_; }
  VctStepTimes set_lights(const std::vector<VctLight>& lights) override;
  VctStepTimes revoxelize() override;
  // The top level goes to the device; the grid is updated over the regions the moved instances touched
  // (kernels/vct/vct_update.h), or voxelized again whole where the host backend does that too.
  VctUpdateTimes place_instances(const TopLevelBvh& top) override;
  void render_tile(const CameraParams& camera, const RenderSettings& settings, const VctFrameSettings& frame,
                   const TileRect& tile, std::span<uint32_t> out) override;
  BatchTiming render_tiles(const std::array<CameraParams, 2>& cameras, const RenderSettings& settings,
                           const VctFrameSettings& frame, std::span<const BatchTile> tiles, std::span<uint32_t> out,
                           const StopRequested& stop) override;
  double last_tile_ms() const override { return last_tile_ms_; }
  cpu::VctGridData read_grid() const override;

  double last_primary_ms() const override { return last_primary_ms_; }
  double last_shade_ms() const override { return last_shade_ms_; }
  // false: every output through the single vct_tile kernel (the two paths give the same bytes).
  void set_split_tile(bool split) { split_tile_ = split; }

  const cl::Device& device() const { return device_; }
  uint64_t scene_device_bytes() const { return scene_.device_bytes(); }

 private:
  VctStepTimes build();
  // The grid updated over plan's regions (worker/render/opencl_vct_update.cpp); fills u's steps and counts.
  void update(const VctUpdatePlan& plan, VctUpdateTimes& u);
  uint32_t voxelize_lanes() const;  // work items a triangle
  // vct_voxelize's arguments for one pass over `region`, the items of `spans` (span_count of them).
  void set_voxelize_args(uint32_t pass, const VctRegion& region, const cl::Buffer& spans, uint32_t span_count,
                         uint32_t items, const cl::Buffer& dense_masks, const cl::Buffer& map, const cl::Buffer& bricks,
                         const cl::Buffer& accum);
  static double device_ms(const std::vector<cl::Event>& events);
  void set_spans();  // the voxelization work of the instances as placed (top_)
  VctStepTimes relight();

  cl::Device device_;
  cl::DeviceMemoryBudget budget_;
  DeviceScene scene_;
  cl::Program program_;
  cl::Kernel voxelize_, interior_columns_, interior_mark_, parent_masks_, count_, assign_, finalize_, relight_, mip_, tile_,
      tile_primary_, tile_shade_;
  cl::Kernel update_cells_, copy_kept_, region_bricks_, finalize_region_, update_light_, dirty_parents_, update_mip_;
  struct BatchKernels {
    cl::Kernel whole, primary, shade;
  };
  std::optional<BatchKernels> batch_;  // GPU code path only
  cl::Buffer tile_list_;
  VctOptions options_;
  VctGridParams geometry_{};  // the grid's placement and size, fixed at load
  VctGridParams params_{};
  TopLevelBvh top_;           // an instanced scene's top level, as placed last
  uint32_t work_items_ = 0;   // voxelization work items: triangles, or the instances' triangles
  uint32_t span_count_ = 0;
  cl::Buffer spans_;
  VctTriangleBlocks blocks_;  // an instanced scene's runs of triangles, for planning updates
  cl::Buffer masks_;          // the brick masks, kept where the grid is updated incrementally
  cl::Buffer map_, bricks_, radiance_, positions_, albedo_, normal_, dense_, lights_buffer_, output_, records_;
  std::vector<VctLight> lights_;
  VctGridStats stats_;
  VctStepTimes build_times_;
  bool split_tile_ = true;
  double last_tile_ms_ = 0, last_primary_ms_ = 0, last_shade_ms_ = 0;
};

}  // namespace tessera
