/* Persistent work-groups (Aila and Laine 2009): a launch of just enough work-groups to fill the
 * device, each taking the next virtual work-group of the whole grid from a global counter until
 * none is left, instead of one hardware work-group per virtual one. A group that drew short rays
 * takes more work at once rather than waiting for the hardware to schedule the next group.
 *
 *   while (persistent_next_group(counter, &slot, groups_x * groups_y, &g)) {
 *     uint x = persistent_item(g % groups_x, 0), y = persistent_item(g / groups_x, 1);
 *     ... the work item (x, y) of the ordinary launch ...
 *   }
 *
 * Every work item of the group must make the call (it holds barriers), so leave the loop only
 * through its condition. The counter is one uint, zeroed before each launch. OpenCL only. */
#ifndef TESSERA_KERNELS_RENDER_PERSISTENT_GROUPS_H
#define TESSERA_KERNELS_RENDER_PERSISTENT_GROUPS_H
#include "kernels/base/compat.h"

#ifdef TS_DEVICE_OPENCL
/* Sets *group to the next virtual group for the whole work-group; 0 when all group_count are
 * taken. slot: a __local uint of the kernel. */
inline int persistent_next_group(volatile __global uint* counter, __local uint* slot, uint group_count, uint* group) {
  barrier(CLK_LOCAL_MEM_FENCE); /* every work item has read the previous group */
  if (get_local_id(0) == 0 && get_local_id(1) == 0 && get_local_id(2) == 0) *slot = atomic_inc(counter);
  barrier(CLK_LOCAL_MEM_FENCE);
  *group = *slot;
  return *group < group_count;
}

/* Global index along `dim` of this work item inside virtual group coordinate `group_coord`. */
inline uint persistent_item(uint group_coord, uint dim) {
  return group_coord * (uint)get_local_size(dim) + (uint)get_local_id(dim);
}

/* Virtual groups along `dim` that cover `items` work items. */
inline uint persistent_groups(uint items, uint dim) {
  uint size = (uint)get_local_size(dim);
  return (items + size - 1u) / size;
}
#endif

#endif
