// One discovery datagram as tessera-master --discover receives it; a beacon that decodes must
// encode again (what a worker would send).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/net/discovery.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string why;
  const auto beacon = tessera::net::decode_beacon(data, size, &why);
  if (!beacon) return 0;
  const std::vector<uint8_t> again = tessera::net::encode_beacon(*beacon);  // throws if it would not decode
  if (!tessera::net::decode_beacon(again.data(), again.size())) std::abort();
  return 0;
}
