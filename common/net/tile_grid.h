#pragma once
// The meaning of a tile id on the wire: square tiles enumerated row by row over each eye's
// image (edge tiles cut to the image); stereo frames put the right eye's tiles after the left's.
#include <cstdint>

namespace tessera::net {

struct TileSpec {
  uint32_t eye = 0;  // 0 = left / mono, 1 = right
  uint32_t x0 = 0, y0 = 0, width = 0, height = 0;  // in the eye's image
};

class TileGrid {
 public:
  TileGrid() = default;
  // Throws Error on sizes outside the protocol's limits (message_limits.h).
  TileGrid(uint32_t width, uint32_t height, uint32_t tile_size, uint32_t eyes = 1);

  uint32_t width() const { return width_; }
  uint32_t height() const { return height_; }
  uint32_t tile_size() const { return tile_size_; }
  uint32_t eyes() const { return eyes_; }
  uint32_t tiles_x() const { return tiles_x_; }
  uint32_t tiles_y() const { return tiles_y_; }
  uint32_t tiles_per_eye() const { return tiles_x_ * tiles_y_; }
  uint32_t tile_count() const { return tiles_per_eye() * eyes_; }
  // Throws Error for an id outside the grid.
  TileSpec tile(uint32_t id) const;

 private:
  uint32_t width_ = 0, height_ = 0, tile_size_ = 0, eyes_ = 1, tiles_x_ = 0, tiles_y_ = 0;
};

}  // namespace tessera::net
