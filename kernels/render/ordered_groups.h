/* Work-groups longest first: hardware group g runs virtual group order[g] of the grid, and each
 * group records what it cost, so that the host can hand the next launch of the same work its
 * costliest groups first (Graham's longest-processing-time rule; worker/render/longest_first.h).
 * A launch in grid order ends with whatever its last rows hold: when they are costly, the device
 * drains for a long time with few warps in flight. Ordered by the very costs of the launch before,
 * it drains less: a bound on what the end of a launch costs (another view's costs order worse).
 *
 * The cost is the group's time on the device's clock where the host says there is one that a
 * kernel can read (-D TS_GROUP_CLOCK_GLOBALTIMER=1: NVIDIA's nanosecond timer, through inline PTX);
 * elsewhere (OpenCL 1.2 has no clock) a logical one, a global counter that every group's start and
 * end advance: then a group's cost is the number of group starts and ends while it ran, coarser,
 * and 2 atomics a group on one address. The host only compares costs with one another.
 *
 *   uint g = ordered_group(order), x = persistent_item(g % groups_x, 0), ...;
 *   uint ticket = ordered_group_start(costs, group_count);
 *   if (x < width && y < height) { ... the work item (x, y) of the ordinary launch ... }
 *   ordered_group_end(costs, group_count, g, ticket);
 *
 * costs holds group_count + 1 uints: the costs, then the clock (never reset: differences wrap).
 * Every work item must reach ordered_group_end (it holds a barrier). OpenCL only. */
#ifndef TESSERA_KERNELS_RENDER_ORDERED_GROUPS_H
#define TESSERA_KERNELS_RENDER_ORDERED_GROUPS_H
#include "kernels/base/compat.h"

#ifndef TS_GROUP_CLOCK_GLOBALTIMER
#define TS_GROUP_CLOCK_GLOBALTIMER 0
#endif

#ifdef TS_DEVICE_OPENCL
inline int ordered_group_leader(void) { return get_local_id(0) == 0 && get_local_id(1) == 0; }

/* The virtual group this hardware group runs. */
inline uint ordered_group(__global const uint* order) {
  return order[get_group_id(1) * get_num_groups(0) + get_group_id(0)];
}

/* The clock: a reading that wraps (only differences count). */
inline uint ordered_group_clock(volatile __global uint* clock) {
#if TS_GROUP_CLOCK_GLOBALTIMER
  ulong t;
  (void)clock;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return (uint)t;
#else
  return atomic_inc(clock);
#endif
}

/* The clock's reading as the group starts (the leader's; 0 for the others). */
inline uint ordered_group_start(volatile __global uint* costs, uint group_count) {
  return ordered_group_leader() ? ordered_group_clock(costs + group_count) : 0u;
}

/* Once every work item of the group is done: costs[group] = clock ticks since ticket (at least 1). */
inline void ordered_group_end(volatile __global uint* costs, uint group_count, uint group, uint ticket) {
  barrier(CLK_LOCAL_MEM_FENCE);
  if (ordered_group_leader()) costs[group] = max(ordered_group_clock(costs + group_count) - ticket, 1u);
}
#endif

#endif
