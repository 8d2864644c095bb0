#pragma once
// A whole `pathtrace` frame on this machine (tessera-render, tessera-bench, tests): the image is
// cut into tiles enumerated row by row, both eyes of each tile rendered by PathTraceRenderer
// (all tiles as one batch where the device launches batches), and the tiles composited per eye. tile_size 0 renders the whole image as one tile, which keeps
// every reprojected sample (a tile only exchanges samples between its own two rectangles).
#include <functional>

#include "common/image/image.h"
#include "worker/render/pathtrace_renderer.h"

namespace tessera {

struct PtFrameResult {
  ImageRgba8 eyes[2];   // left (or mono) and right
  ImageRgbF linear[2];  // mean radiance before exposure/sRGB, when asked for
  PtTileStats totals;   // summed over the tiles (ms: the frame's wall time)
  size_t tiles = 0;
};

PtFrameResult render_pathtrace_frame(PathTraceRenderer& renderer, const PtView& view, const RenderSettings& settings,
                                     const PathTraceSettings& pt, uint32_t tile_size = 0, bool want_linear = false,
                                     const std::function<void(size_t, size_t)>& progress = {});

}  // namespace tessera
