/* Ordering a work-group's rays by direction octant before tracing them: work item i then traces
 * the ray of rank i, so the rays a SIMD group walks together head the same way (the same near
 * child first at every node) and, the sort being stable, still start close to each other when the
 * work-group covers a block of pixels. For incoherent rays such as diffuse bounces.
 *
 * The rank is counted over the group's keys in __local memory (every work item reads every key:
 * O(n) a work item, with all items reading the same key at once). OpenCL only; the keys, ranks and
 * the work items' barriers are the caller's. */
#ifndef TESSERA_KERNELS_RENDER_RAY_OCTANT_SORT_H
#define TESSERA_KERNELS_RENDER_RAY_OCTANT_SORT_H
#include "kernels/base/vec.h"

#define TS_RAY_SORT_MAX_GROUP 256 /* work items of a sorting group, at most */
#define TS_RAY_SORT_NO_RAY 8u     /* key of a work item without a ray: after every octant */

/* 0-7: the signs of dir's components (bit 0 x, bit 1 y, bit 2 z set where negative). */
TS_FN uint ray_octant(float3 dir) {
  return (dir.x < 0.0f ? 1u : 0u) | (dir.y < 0.0f ? 2u : 0u) | (dir.z < 0.0f ? 4u : 0u);
}

#ifdef TS_DEVICE_OPENCL
/* Stable rank of item `i`'s key among keys[0, n): the items with a smaller key, and those before
 * it with the same key. */
inline uint ray_sort_rank(__local const uchar* keys, uint n, uint i) {
  uint key = keys[i], rank = 0u, j;
  for (j = 0u; j < n; ++j) {
    uint k = keys[j];
    rank += (k < key || (k == key && j < i)) ? 1u : 0u;
  }
  return rank;
}
#endif

#endif
