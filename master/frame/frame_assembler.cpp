#include "master/frame/frame_assembler.h"

#include <chrono>

#include "common/base/error.h"
#include "common/base/zstd_codec.h"
#include "common/net/tile_codec.h"

namespace tessera::master {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

FrameAssembler::FrameAssembler(const net::TileGrid& grid, bool depth)
    : grid_(grid),
      image_(int(grid.width() * grid.eyes()), int(grid.height())),
      depth_(depth ? size_t(grid.width()) * grid.eyes() * grid.height() : 0, 0),
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
  if (!depth_.empty() && !result.depth().empty()) composite_depth(result, spec, timing);
  return timing;
}

void FrameAssembler::composite_depth(const wire::TileResult& result, const net::TileSpec& spec, CompositeTiming& timing) {
  const auto start = std::chrono::steady_clock::now();
  const auto* packed = reinterpret_cast<const uint8_t*>(result.depth().data());
  const std::vector<uint8_t> bytes = zstd_decompress({packed, result.depth().size()}, size_t(spec.width) * spec.height * 2);
  timing.decode_ms += ms_since(start);
  const auto copy_start = std::chrono::steady_clock::now();
  const size_t stride = size_t(grid_.width()) * grid_.eyes();
  for (uint32_t y = 0; y < spec.height; ++y) {
    uint16_t* row = depth_.data() + (size_t(spec.y0) + y) * stride + size_t(spec.eye) * grid_.width() + spec.x0;
    const uint8_t* in = bytes.data() + size_t(y) * spec.width * 2;
    for (uint32_t x = 0; x < spec.width; ++x) row[x] = uint16_t(in[2 * x] | in[2 * x + 1] << 8);  // little-endian on the wire
  }
  timing.composite_ms += ms_since(copy_start);
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
