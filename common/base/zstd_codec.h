#pragma once
// zstd compression of byte buffers (.tpk sections, tile pixels on the wire).
#include <cstdint>
#include <span>
#include <vector>

namespace tessera {

std::vector<uint8_t> zstd_compress(std::span<const uint8_t> raw, int level);
// Throws tessera::Error unless the frame decodes to exactly `expected_size` bytes.
std::vector<uint8_t> zstd_decompress(std::span<const uint8_t> compressed, size_t expected_size);

// For whole files: the frame must declare its decompressed size, at most `max_size` bytes.
std::vector<uint8_t> zstd_decompress_file(std::span<const uint8_t> compressed, size_t max_size);

}  // namespace tessera
