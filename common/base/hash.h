#pragma once
// Content checksums (XXH64): section integrity in .tpk files and scene identity on the wire.
#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera {

uint64_t hash64(const void* data, size_t size, uint64_t seed = 0);
std::string hash64_hex(uint64_t hash);

}  // namespace tessera
