#include "common/base/memory_usage.h"

#include <sys/resource.h>

namespace tessera {

uint64_t peak_resident_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace tessera
