/* The compact kd-tree as stored in device memory (Choi et al. 2013, extended by Seo et al. 2017:
 * an inner node may hold up to two triangle references). Every node is 8 bytes, two 32-bit words:
 *
 *   word0 bits 0-1   kind: 0, 1, 2 = inner node splitting x, y, z; 3 = leaf
 *   inner node:
 *     word0 bits 2-3   number of triangle references held by the node (0, 1 or 2)
 *     word0 bits 4-31  index of the child above the split plane
 *     word1            split position (float bits)
 *     The child below the split plane follows the node directly. A node holding references
 *     is followed first by one 8-byte slot with the two triangle indices (the second is
 *     TS_KD_NO_TRIANGLE when it holds one), so it takes 16 bytes like Choi et al.'s layout.
 *   leaf:
 *     word0 bits 2-31  number of triangles
 *     word1            1 triangle: its index; 2 or more: first index into kd_leaf_refs
 *
 * Depth-first order: the root is node 0 and the near child of every inner node is adjacent. */
#ifndef TESSERA_KERNELS_ACCEL_KDTREE_LAYOUT_H
#define TESSERA_KERNELS_ACCEL_KDTREE_LAYOUT_H
#include "kernels/base/compat.h"

#define TS_KD_LEAF 3u
#define TS_KD_NO_TRIANGLE 0xFFFFFFFFu
#define TS_KD_MAX_NODE_INDEX 0x0FFFFFFFu /* 28 bits for the far child */
#define TS_KD_MAX_LEAF_COUNT 0x3FFFFFFFu

TS_FN uint kd_node_kind(uint word0) { return word0 & 3u; }
TS_FN uint kd_inner_ref_count(uint word0) { return (word0 >> 2) & 3u; }
TS_FN uint kd_inner_above_child(uint word0) { return word0 >> 4; }
TS_FN uint kd_inner_below_child(uint node, uint word0) { return node + 1u + (kd_inner_ref_count(word0) ? 1u : 0u); }
TS_FN uint kd_leaf_count(uint word0) { return word0 >> 2; }

TS_FN uint kd_make_inner_word0(uint axis, uint ref_count, uint above_child) {
  return axis | (ref_count << 2) | (above_child << 4);
}
TS_FN uint kd_make_leaf_word0(uint count) { return TS_KD_LEAF | (count << 2); }

#endif
