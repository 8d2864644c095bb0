#include "common/base/hash.h"

#include <cstdio>
#include <xxhash.h>

namespace tessera {

uint64_t hash64(const void* data, size_t size, uint64_t seed) { return XXH64(data, size, seed); }

std::string hash64_hex(uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace tessera
