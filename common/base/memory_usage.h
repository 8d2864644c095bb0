#pragma once
#include <cstdint>

namespace tessera {

// Peak resident set size of this process so far, in bytes.
uint64_t peak_resident_bytes();

// The host's physical memory, in bytes (0 when the system does not say).
uint64_t host_memory_bytes();

}  // namespace tessera
