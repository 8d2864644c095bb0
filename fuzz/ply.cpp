// PLY files (ASCII and binary little endian) as tessera-pack reads them.
#include <cstddef>
#include <cstdint>

#include "common/base/error.h"
#include "common/scene/ply_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)tessera::parse_ply({data, size}, "fuzz.ply");
  } catch (const tessera::Error&) {
  }
  return 0;
}
