#pragma once
// The host backend of the vct mode: kernels/vct compiled for the CPU (kernels/device/cpu/vct_cpu).
#include "common/render/shading_data.h"
#include "worker/render/vct_instances.h"
#include "worker/render/vct_renderer.h"

namespace tessera {

class HostVctRenderer final : public VctRenderer {
 public:
  HostVctRenderer(const PackedScene& scene, unsigned threads, const VctOptions& options, std::vector<VctLight> lights,
                  SceneMemory scene_memory = SceneMemory::fast);
  std::string description() const override;
  const VctGridParams& grid_params() const override { return grid_.params; }
  const VctGridStats& grid_stats() const override { return stats_; }
  const VctStepTimes& build_times() const override { return build_times_; }
  const std::vector<VctLight>& lights() const override { return lights_; }
  VctStepTimes set_lights(const std::vector<VctLight>& lights) override;
  VctStepTimes revoxelize() override;
  VctUpdateTimes place_instances(const TopLevelBvh& top) override;
  void render_tile(const CameraParams& camera, const RenderSettings& settings, const VctFrameSettings& frame,
                   const TileRect& tile, std::span<uint32_t> out) override;
  double last_tile_ms() const override { return last_tile_ms_; }
  cpu::VctGridData read_grid() const override { return grid_; }

 private:
  const PackedScene& scene_;
  SceneView view_;
  TopLevelBvh top_;                     // an instanced scene's top level, as placed last
  std::vector<uint32_t> object_words_;  // its objects (TS_OBJECT_WORDS each)
  std::vector<uint4> spans_;            // its triangles as voxelization work
  VctTriangleBlocks blocks_;            // runs of its objects' triangles, for updates
  VctGridParams geometry_{};            // the grid's placement and size, fixed at load
  ShadingData shading_;
  ShadingContext context_;
  unsigned threads_;
  VctOptions options_;
  std::vector<VctLight> lights_;
  cpu::VctGridData grid_;
  VctGridStats stats_;
  VctStepTimes build_times_;
  double last_tile_ms_ = 0;
};

}  // namespace tessera
