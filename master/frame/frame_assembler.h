#pragma once
// Composites returned tiles into a frame and keeps the books that make a frame whole: each tile
// is accepted exactly once and must match the frame's grid; the frame is complete only when
// every tile has arrived. Stereo frames are the two eyes side by side.
#include <cstdint>
#include <vector>

#include "common/image/image.h"
#include "common/net/tile_grid.h"
#include "wire.pb.h"

namespace tessera::master {

class FrameAssembler {
 public:
  explicit FrameAssembler(const net::TileGrid& grid);

  bool has(uint32_t tile) const { return tile < owner_.size() && owner_[tile] >= 0; }
  // Throws Error when the tile does not belong to the grid or its pixels do not decode; then
  // nothing changes. A tile already present is the caller's to check (has()).
  void add(const wire::TileResult& result, int worker);
  bool complete() const { return received_ == owner_.size(); }
  uint32_t received() const { return received_; }
  uint32_t tile_count() const { return uint32_t(owner_.size()); }
  const ImageRgba8& image() const { return image_; }
  ImageRgba8 take_image() { return std::move(image_); }
  const std::vector<int>& owners() const { return owner_; }  // worker index per tile, -1 missing
  const net::TileGrid& grid() const { return grid_; }

 private:
  net::TileGrid grid_;
  ImageRgba8 image_;
  std::vector<int> owner_;
  uint32_t received_ = 0;
};

}  // namespace tessera::master
