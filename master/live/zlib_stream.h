#pragma once
// The zlib streams (RFC 1950) that carry a frame's depth and alpha to the pages beside the JPEG
// bands: what a browser's DecompressionStream('deflate') reads.
#include <cstdint>
#include <span>
#include <string>

namespace tessera::master::live {

// zlib compress2 at `level` (1: fastest; depth and alpha planes of a live frame are mostly smooth
// runs, and level 1 keeps them within a millisecond or two a megapixel).
std::string zlib_compress(std::span<const uint8_t> raw, int level = 1);
// Throws Error unless `stream` is one whole zlib stream of exactly `expected_size` bytes.
std::string zlib_decompress(const std::string& stream, size_t expected_size);

}  // namespace tessera::master::live
