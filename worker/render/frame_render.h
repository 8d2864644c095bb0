#pragma once
// Renders a whole frame through a TileRenderer, tile by tile, into an image.
#include <functional>

#include "common/image/image.h"
#include "worker/render/tile_renderer.h"

namespace tessera {

// progress(done, total) is called after every tile.
ImageRgba8 render_frame(TileRenderer& renderer, const CameraParams& camera, const RenderSettings& settings,
                        uint32_t tile_size = 256, const std::function<void(size_t, size_t)>& progress = {});

}  // namespace tessera
