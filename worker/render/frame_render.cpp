#include "worker/render/frame_render.h"

#include <algorithm>
#include <vector>

namespace tessera {

ImageRgba8 render_frame(TileRenderer& renderer, const CameraParams& camera, const RenderSettings& settings, uint32_t tile_size,
                        const std::function<void(size_t, size_t)>& progress) {
  ImageRgba8 frame(int(camera.width), int(camera.height));
  const uint32_t tiles_x = (camera.width + tile_size - 1) / tile_size, tiles_y = (camera.height + tile_size - 1) / tile_size;
  std::vector<uint32_t> pixels;
  for (uint32_t ty = 0; ty < tiles_y; ++ty)
    for (uint32_t tx = 0; tx < tiles_x; ++tx) {
      const TileRect tile{tx * tile_size, ty * tile_size, std::min(tile_size, camera.width - tx * tile_size),
                          std::min(tile_size, camera.height - ty * tile_size)};
      pixels.resize(size_t(tile.width) * tile.height);
      renderer.render_raytrace(camera, settings, tile, pixels);
      composite_tile(frame, int(tile.x0), int(tile.y0), int(tile.width), int(tile.height),
                     {reinterpret_cast<const uint8_t*>(pixels.data()), pixels.size() * 4});
      if (progress) progress(ty * tiles_x + tx + 1, size_t(tiles_x) * tiles_y);
    }
  return frame;
}

}  // namespace tessera
