#include "worker/render/null_tile_renderer.h"

#include "common/base/error.h"
#include <algorithm>

namespace tessera {

uint32_t null_device_pixel(uint32_t x, uint32_t y, uint32_t width, uint32_t height) {
  const uint32_t r = width > 1 ? 255 * x / (width - 1) : 0;
  const uint32_t g = height > 1 ? 255 * y / (height - 1) : 0;
  const uint32_t b = 128;
  return r | (g << 8) | (b << 16) | (0xFFu << 24);
}

void NullTileRenderer::render_raytrace(const CameraParams& camera, const RenderSettings&, const TileRect& tile,
                                       std::span<uint32_t> out) {
  if (out.size() < uint64_t(tile.width) * tile.height) throw Error("null device: tile larger than its output");
  for (uint32_t row = 0; row < tile.height; ++row)
    for (uint32_t column = 0; column < tile.width; ++column)
      out[size_t(row) * tile.width + column] = null_device_pixel(tile.x0 + column, tile.y0 + row, camera.width, camera.height);
}

BatchTiming NullTileRenderer::render_aux_batch(const std::array<CameraParams, 2>&, const RenderSettings&, const AuxSettings&,
                                               std::span<const BatchTile> tiles, std::span<uint32_t> out, const StopRequested&) {
  const uint32_t mid_depth_covered = aux_pack(0x8000u, 255u);  // every pixel hits, halfway in depth
  for (const BatchTile& tile : tiles) {
    const uint64_t pixels = uint64_t(tile.rect.width) * tile.rect.height;
    if (tile.eye > 1 || tile.offset + pixels > out.size()) throw Error("batch tile outside the batch's output");
    std::fill_n(out.begin() + ptrdiff_t(tile.offset), pixels, mid_depth_covered);
  }
  return {};
}

}  // namespace tessera
