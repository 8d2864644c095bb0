#include "common/net/tile_grid.h"

#include <algorithm>
#include <string>

#include "common/base/error.h"
#include "common/net/message_limits.h"

namespace tessera::net {

TileGrid::TileGrid(uint32_t width, uint32_t height, uint32_t tile_size, uint32_t eyes)
    : width_(width), height_(height), tile_size_(tile_size), eyes_(eyes) {
  if (width == 0 || height == 0 || width > kMaxImageSide || height > kMaxImageSide)
    throw Error("image size " + std::to_string(width) + "x" + std::to_string(height) + " outside 1.." +
                std::to_string(kMaxImageSide));
  if (tile_size < kMinTileSide || tile_size > kMaxTileSide)
    throw Error("tile size " + std::to_string(tile_size) + " outside " + std::to_string(kMinTileSide) + ".." +
                std::to_string(kMaxTileSide));
  if (eyes != 1 && eyes != 2) throw Error("a frame has one or two eyes");
  tiles_x_ = (width + tile_size - 1) / tile_size;
  tiles_y_ = (height + tile_size - 1) / tile_size;
  if (uint64_t(tiles_x_) * tiles_y_ * eyes > kMaxTilesPerFrame)
    throw Error("more than " + std::to_string(kMaxTilesPerFrame) + " tiles a frame: use larger tiles");
}

TileSpec TileGrid::tile(uint32_t id) const {
  if (id >= tile_count()) throw Error("tile " + std::to_string(id) + " outside the frame's " + std::to_string(tile_count()) + " tiles");
  TileSpec t;
  t.eye = id / tiles_per_eye();
  const uint32_t local = id % tiles_per_eye();
  t.x0 = (local % tiles_x_) * tile_size_;
  t.y0 = (local / tiles_x_) * tile_size_;
  t.width = std::min(tile_size_, width_ - t.x0);
  t.height = std::min(tile_size_, height_ - t.y0);
  return t;
}

}  // namespace tessera::net
