#include "master/frame/frame_assembler.h"

#include "common/base/error.h"
#include "common/net/tile_codec.h"

namespace tessera::master {

FrameAssembler::FrameAssembler(const net::TileGrid& grid)
    : grid_(grid), image_(int(grid.width() * grid.eyes()), int(grid.height())), owner_(grid.tile_count(), -1) {}

void FrameAssembler::add(const wire::TileResult& result, int worker) {
  const net::TileSpec spec = grid_.tile(result.tile_id());
  if (result.x0() != spec.x0 || result.y0() != spec.y0 || result.width() != spec.width || result.height() != spec.height)
    throw Error("tile " + std::to_string(result.tile_id()) + " arrived with a rectangle that is not its own");
  const std::vector<uint8_t> pixels = net::decode_tile_pixels(result);
  composite_tile(image_, int(spec.eye * grid_.width() + spec.x0), int(spec.y0), int(spec.width), int(spec.height), pixels);
  owner_[result.tile_id()] = worker;
  ++received_;
}

}  // namespace tessera::master
