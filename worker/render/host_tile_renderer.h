#pragma once
#include "common/render/shading_data.h"
#include "worker/render/tile_renderer.h"

namespace tessera {

class HostTileRenderer final : public TileRenderer {
 public:
  HostTileRenderer(const PackedScene& scene, unsigned threads);
  std::string description() const override;
  uint64_t scene_device_bytes() const override { return 0; }
  void render_raytrace(const CameraParams& camera, const RenderSettings& settings, const TileRect& tile,
                       std::span<uint32_t> out) override;

 private:
  SceneView view_;
  ShadingData shading_;
  ShadingContext context_;
  unsigned threads_;
};

}  // namespace tessera
