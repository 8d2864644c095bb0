#pragma once
// `--device null`: a backend that renders nothing. Every tile is answered at once with the same
// fixed image (a gradient over the whole frame, so tiles compress as a smooth picture does, and a
// constant depth), whatever the scene and camera. A load-test tool for the master alone: many such
// workers on one host show what the master's scheduling, compositing and output cost per frame and
// per tile, and where it saturates, with no render time in the way (deploy/scale-bench,
// docs/scale.md). Raytrace frames only: pathtrace and vct are refused.
#include "worker/render/tile_renderer.h"

namespace tessera {

class NullTileRenderer final : public TileRenderer {
 public:
  std::string description() const override { return "null (a fixed image, for load tests)"; }
  uint64_t scene_device_bytes() const override { return 0; }
  void render_raytrace(const CameraParams& camera, const RenderSettings& settings, const TileRect& tile,
                       std::span<uint32_t> out) override;
  BatchTiming render_aux_batch(const std::array<CameraParams, 2>& cameras, const RenderSettings& settings,
                               const AuxSettings& aux, std::span<const BatchTile> tiles, std::span<uint32_t> out,
                               const StopRequested& stop) override;
  void set_sun(const std::optional<SunOverride>&) override {}
};

// The colour --device null gives pixel (x, y) of a width x height image (RGBA8, alpha 255).
uint32_t null_device_pixel(uint32_t x, uint32_t y, uint32_t width, uint32_t height);

}  // namespace tessera
