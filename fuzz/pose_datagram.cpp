// One UDP datagram as tessera-master --poses udp:// receives it (CSV or JSON pose record).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/base/error.h"
#include "master/pose/pose_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)tessera::master::parse_pose_datagram({reinterpret_cast<const char*>(data), size}, size);
  } catch (const tessera::Error&) {
  }
  return 0;
}
