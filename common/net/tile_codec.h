#pragma once
// Tile pixels on the wire: raw RGBA8 or one zstd frame of it (falling back to raw when zstd
// does not make it smaller).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "wire.pb.h"

namespace tessera::net {

// Fills result.encoding and result.data. zstd_level <= 0 means raw.
void encode_tile_pixels(std::span<const uint32_t> rgba, int zstd_level, wire::TileResult& result);
// RGBA8 bytes of width * height pixels; throws Error when the data does not decode to that size.
std::vector<uint8_t> decode_tile_pixels(const wire::TileResult& result);
// The same pixels without a copy where the encoding allows: raw tiles are viewed in place in the
// message, zstd tiles are decoded into `scratch`. Valid while both live.
std::span<const uint8_t> tile_pixels_view(const wire::TileResult& result, std::vector<uint8_t>& scratch);

}  // namespace tessera::net
