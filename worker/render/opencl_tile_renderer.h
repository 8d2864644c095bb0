#pragma once
#include <memory>
#include <optional>

#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/program.h"
#include "worker/render/device_scene.h"
#include "worker/render/tile_renderer.h"

namespace tessera {

class OpenClTileRenderer final : public TileRenderer {
 public:
  OpenClTileRenderer(const PackedScene& scene, const std::string& device_spec, std::optional<uint64_t> memory_limit,
                     SceneMemory scene_memory = SceneMemory::fast);
  std::string description() const override;
  uint64_t scene_device_bytes() const override { return scene_.device_bytes(); }
  void render_raytrace(const CameraParams& camera, const RenderSettings& settings, const TileRect& tile,
                       std::span<uint32_t> out) override;

  std::shared_ptr<HostPixels> host_pixels(size_t count) override;
  BatchTiming render_raytrace_batch(const std::array<CameraParams, 2>& cameras, const RenderSettings& settings,
                                    std::span<const BatchTile> tiles, std::span<uint32_t> out,
                                    const StopRequested& stop) override;
  bool launches_batches() const override { return batch_kernel_.has_value(); }
  void set_sun(const std::optional<SunOverride>& sun) override;
  void place_instances(const TopLevelBvh& top) override { scene_.place_instances(device_, budget_, top); }
  BatchTiming render_aux_batch(const std::array<CameraParams, 2>& cameras, const RenderSettings& settings,
                               const AuxSettings& aux, std::span<const BatchTile> tiles, std::span<uint32_t> out,
                               const StopRequested& stop) override;

  const cl::Device& device() const { return device_; }
  const cl::Program& program() const { return program_; }
  // Milliseconds the last tile's kernel ran on the device (profiling events).
  double last_kernel_ms() const { return last_kernel_ms_; }

 private:
  cl::Buffer& output_buffer(uint64_t bytes);

  cl::Device device_;
  cl::DeviceMemoryBudget budget_;
  DeviceScene scene_;
  cl::Program program_;
  cl::Kernel kernel_;
  cl::Buffer output_;
  std::optional<cl::Kernel> batch_kernel_;  // GPU code path only (see render_raytrace_batch)
  cl::Buffer tile_list_;
  cl::Kernel aux_kernel_;
  cl::Buffer aux_output_;
  // Pinned host memory for batch readbacks, reused: a batch's memory comes back here once its
  // tiles are encoded.
  struct PinnedPool;
  std::shared_ptr<PinnedPool> pinned_;
  double last_kernel_ms_ = 0;
  std::optional<SunOverride> sun_;
};

}  // namespace tessera
