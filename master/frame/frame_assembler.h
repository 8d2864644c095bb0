#pragma once
// Composites returned tiles into a frame and keeps the books that make a frame whole: each tile
// is accepted exactly once and must match the frame's grid; the frame is complete only when
// every tile is composited. Stereo frames are the two eyes side by side.
// A tile goes through claim() (scheduling thread: it belongs to the grid and to this worker),
// composite() (any thread: decoded straight into the frame; distinct tiles in parallel) and
// mark_composited() (scheduling thread), or release() when its pixels did not decode.
#include <cstdint>
#include <vector>

#include "common/image/image.h"
#include "common/net/tile_grid.h"
#include "wire.pb.h"

namespace tessera::master {

struct CompositeTiming {
  double decode_ms = 0;     // zstd (0 for raw tiles), the depth's included
  double composite_ms = 0;  // rows into the frame (colour and depth)
};

class FrameAssembler {
 public:
  // `depth`: the tiles' TileResult.depth is composited too, into eyes*width x height inverse depths
  // (FrameRequest.aux, AuxOutputs.depth); a tile without it leaves 0 there (nothing hit).
  explicit FrameAssembler(const net::TileGrid& grid, bool depth = false);

  // Claimed (arrived), composited or not.
  bool has(uint32_t tile) const { return tile < owner_.size() && owner_[tile] >= 0; }
  bool composited(uint32_t tile) const { return tile < done_.size() && done_[tile]; }
  // Throws Error when the tile does not belong to the grid; then nothing changes. A tile already
  // present is the caller's to check (has()).
  void claim(const wire::TileResult& result, int worker);
  // Any thread, once per claimed tile. Throws Error when its pixels do not decode.
  CompositeTiming composite(const wire::TileResult& result);
  void mark_composited(uint32_t tile);
  void release(uint32_t tile);
  // claim + composite + mark_composited in one (nothing changes when it throws).
  void add(const wire::TileResult& result, int worker);

  bool complete() const { return received_ == owner_.size(); }
  uint32_t received() const { return received_; }  // composited
  uint32_t tile_count() const { return uint32_t(owner_.size()); }
  const ImageRgba8& image() const { return image_; }
  ImageRgba8 take_image() { return std::move(image_); }
  const std::vector<uint16_t>& depth() const { return depth_; }  // empty unless asked for
  const std::vector<int>& owners() const { return owner_; }  // worker index per tile, -1 missing
  const net::TileGrid& grid() const { return grid_; }

 private:
  void composite_depth(const wire::TileResult& result, const net::TileSpec& spec, CompositeTiming& timing);

  net::TileGrid grid_;
  ImageRgba8 image_;
  std::vector<uint16_t> depth_;
  std::vector<int> owner_;
  std::vector<uint8_t> done_;
  uint32_t received_ = 0;
};

}  // namespace tessera::master
