#pragma once
#include <optional>

#include "common/render/shading_data.h"
#include "worker/render/host_instances.h"
#include "worker/render/tile_renderer.h"

namespace tessera {

class HostTileRenderer final : public TileRenderer {
 public:
  HostTileRenderer(const PackedScene& scene, unsigned threads, SceneMemory memory = SceneMemory::fast);
  std::string description() const override;
  uint64_t scene_device_bytes() const override { return 0; }
  void render_raytrace(const CameraParams& camera, const RenderSettings& settings, const TileRect& tile,
                       std::span<uint32_t> out) override;
  BatchTiming render_aux_batch(const std::array<CameraParams, 2>& cameras, const RenderSettings& settings,
                               const AuxSettings& aux, std::span<const BatchTile> tiles, std::span<uint32_t> out,
                               const StopRequested& stop) override;
  void set_sun(const std::optional<SunOverride>& sun) override;
  void place_instances(const TopLevelBvh& top) override;

 private:
  SceneView view_;
  ShadingData shading_;
  std::optional<HostInstances> instances_;  // an instanced scene's, as placed last
  ShadingContext context_;
  std::vector<LightGpu> scene_lights_;
  std::optional<SunOverride> sun_;
  unsigned threads_;
};

}  // namespace tessera
