#include "worker/render/persistent_launch.h"

#include <algorithm>

#include "common/base/environment.h"

namespace tessera {

cl::Range2D persistent_range(const cl::Device& device, cl::Range2D local, uint32_t groups_per_unit) {
  const size_t groups = size_t(std::max(1u, device.info().compute_units)) * std::max(1u, groups_per_unit);
  return {local.x, groups * local.y};
}

uint32_t persistent_groups_from_environment() {
  return count_from_environment("TESSERA_PERSISTENT_GROUPS", 1, 1024, "work-groups a compute unit").value_or(0);
}

}  // namespace tessera
