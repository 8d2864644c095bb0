#pragma once
// Host side of persistent work-groups (kernels/render/persistent_groups.h): how many to launch.
#include <cstdint>

#include "common/cl/commands.h"
#include "common/cl/device.h"

namespace tessera {

// A launch range of `groups_per_unit` work-groups of shape `local` for every compute unit of the
// device, stacked along y (the kernels map their virtual groups themselves).
cl::Range2D persistent_range(const cl::Device& device, cl::Range2D local, uint32_t groups_per_unit);

// TESSERA_PERSISTENT_GROUPS=G (1-1024): the render kernels that have a persistent variant
// (pathtrace_paths) launch G persistent work-groups a compute unit. 0 when unset or empty;
// throws Error on any other value.
uint32_t persistent_groups_from_environment();

}  // namespace tessera
