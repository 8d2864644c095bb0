#pragma once
#include <cstdint>

namespace tessera {

// Peak resident set size of this process so far, in bytes.
uint64_t peak_resident_bytes();

}  // namespace tessera
