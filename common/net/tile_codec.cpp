#include "common/net/tile_codec.h"

#include <cstring>

#include "common/base/error.h"
#include "common/base/zstd_codec.h"

namespace tessera::net {

void encode_tile_pixels(std::span<const uint32_t> rgba, int zstd_level, wire::TileResult& result) {
  const std::span<const uint8_t> raw{reinterpret_cast<const uint8_t*>(rgba.data()), rgba.size() * 4};
  if (zstd_level > 0) {
    std::vector<uint8_t> packed = zstd_compress(raw, zstd_level);
    if (packed.size() < raw.size()) {
      result.set_encoding(wire::ZSTD_RGBA8);
      result.set_data(packed.data(), packed.size());
      return;
    }
  }
  result.set_encoding(wire::RAW_RGBA8);
  result.set_data(raw.data(), raw.size());
}

std::span<const uint8_t> tile_pixels_view(const wire::TileResult& result, std::vector<uint8_t>& scratch) {
  const size_t expected = size_t(result.width()) * result.height() * 4;
  const auto* data = reinterpret_cast<const uint8_t*>(result.data().data());
  const auto where = [&] { return "tile " + std::to_string(result.tile_id()) + " of frame " + std::to_string(result.frame_id()); };
  switch (result.encoding()) {
    case wire::RAW_RGBA8:
      if (result.data().size() != expected)
        throw Error(where() + ": " + std::to_string(result.data().size()) + " bytes of pixels, expected " + std::to_string(expected));
      return {data, expected};
    case wire::ZSTD_RGBA8:
      try {
        scratch = zstd_decompress({data, result.data().size()}, expected);
      } catch (const std::exception& e) {
        throw Error(where() + ": " + e.what());
      }
      return scratch;
    default: throw Error(where() + ": unknown pixel encoding " + std::to_string(int(result.encoding())));
  }
}

std::vector<uint8_t> decode_tile_pixels(const wire::TileResult& result) {
  std::vector<uint8_t> scratch;
  const std::span<const uint8_t> pixels = tile_pixels_view(result, scratch);
  if (pixels.data() == scratch.data()) return scratch;
  return {pixels.begin(), pixels.end()};
}

}  // namespace tessera::net
