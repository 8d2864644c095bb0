#include "worker/render/persistent_launch.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "common/base/error.h"

namespace tessera {

cl::Range2D persistent_range(const cl::Device& device, cl::Range2D local, uint32_t groups_per_unit) {
  const size_t groups = size_t(std::max(1u, device.info().compute_units)) * std::max(1u, groups_per_unit);
  return {local.x, groups * local.y};
}

uint32_t persistent_groups_from_environment() {
  const char* env = std::getenv("TESSERA_PERSISTENT_GROUPS");
  if (!env || !*env) return 0;
  char* end = nullptr;
  const unsigned long groups = std::strtoul(env, &end, 10);
  if (*end != '\0' || env[0] == '-' || groups < 1 || groups > 1024)
    throw Error(std::string("bad TESSERA_PERSISTENT_GROUPS '") + env + "' (expected work-groups a compute unit, 1-1024)");
  return uint32_t(groups);
}

}  // namespace tessera
