#pragma once
// The zlib streams (RFC 1950) that carry a frame's depth and alpha to the pages beside the JPEG
// bands: what a browser's DecompressionStream('deflate') reads.
#include <cstdint>
#include <span>
#include <string>

namespace tessera::master::live {

// One zlib stream at `level` (1: fastest; a live frame's depth and alpha planes are mostly smooth
// runs and long constant ones, which level 1 already shrinks 30 to 200 times). Inputs of 512 KiB
// and more are deflated in up to `threads` pieces at once, each ending on a byte boundary (a sync
// flush) so they join into one stream: a few hundred bytes larger, as many times quicker.
std::string zlib_compress(std::span<const uint8_t> raw, int level = 1, unsigned threads = 1);
// Throws Error unless `stream` is one whole zlib stream of exactly `expected_size` bytes.
std::string zlib_decompress(const std::string& stream, size_t expected_size);

}  // namespace tessera::master::live
