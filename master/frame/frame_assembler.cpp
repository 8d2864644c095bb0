#include "master/frame/frame_assembler.h"

#include <chrono>

#include "common/base/error.h"
#include "common/net/tile_codec.h"

namespace tessera::master {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

FrameAssembler::FrameAssembler(const net::TileGrid& grid)
    : grid_(grid),
      image_(int(grid.width() * grid.eyes()), int(grid.height())),
      owner_(grid.tile_count(), -1),
      done_(grid.tile_count(), 0) {}

void FrameAssembler::claim(const wire::TileResult& result, int worker) {
  const net::TileSpec spec = grid_.tile(result.tile_id());
  if (result.x0() != spec.x0 || result.y0() != spec.y0 || result.width() != spec.width || result.height() != spec.height)
    throw Error("tile " + std::to_string(result.tile_id()) + " arrived with a rectangle that is not its own");
  owner_[result.tile_id()] = worker;
}

CompositeTiming FrameAssembler::composite(const wire::TileResult& result) {
  CompositeTiming timing;
  const net::TileSpec spec = grid_.tile(result.tile_id());
  const auto start = std::chrono::steady_clock::now();
  std::vector<uint8_t> scratch;
  const std::span<const uint8_t> pixels = net::tile_pixels_view(result, scratch);
  timing.decode_ms = ms_since(start);
  const auto copy_start = std::chrono::steady_clock::now();
  composite_tile(image_, int(spec.eye * grid_.width() + spec.x0), int(spec.y0), int(spec.width), int(spec.height), pixels);
  timing.composite_ms = ms_since(copy_start);
  return timing;
}

void FrameAssembler::mark_composited(uint32_t tile) {
  if (tile >= done_.size() || done_[tile]) return;
  done_[tile] = 1;
  ++received_;
}

void FrameAssembler::release(uint32_t tile) {
  if (tile >= owner_.size() || done_[tile]) return;
  owner_[tile] = -1;
}

void FrameAssembler::add(const wire::TileResult& result, int worker) {
  const net::TileSpec spec = grid_.tile(result.tile_id());
  if (result.x0() != spec.x0 || result.y0() != spec.y0 || result.width() != spec.width || result.height() != spec.height)
    throw Error("tile " + std::to_string(result.tile_id()) + " arrived with a rectangle that is not its own");
  composite(result);
  claim(result, worker);
  mark_composited(result.tile_id());
}

}  // namespace tessera::master
