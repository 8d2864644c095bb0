/* The compact kd-tree as stored in device memory (Choi et al. 2013, extended by Seo et al. 2017:
 * an inner node may hold up to two triangle references). Every node is one 8-byte slot, two 32-bit
 * words, and a node's index is its slot's index. Three layouts of the same tree exist; all give the
 * very same traversal (the same non-empty nodes visited in the same order, so bit-identical hits)
 * and differ in where a node's children lie:
 *
 *   word0 bits 0-1   kind: 0, 1, 2 = inner node splitting x, y, z; 3 = leaf
 *   inner node:
 *     word0 bits 2-3   number of triangle references held by the node (0, 1 or 2)
 *     word0 bits 4-31  where the children are (below)
 *     word1            split position (float bits)
 *     A node holding references is followed by one 8-byte slot with the two triangle indices (the
 *     second is TS_KD_NO_TRIANGLE when it holds one), so it takes 16 bytes like Choi et al.'s.
 *   leaf:
 *     word0 bits 2-31  number of triangles
 *     word1            1 triangle: its index; 2 or more: first index into kd_leaf_refs
 *
 * Depth-first (the .tpk's KD_NODES section): the root is node 0, the child below the split plane
 * follows its parent (after the reference slot), word0 bits 4-31 index the child above.
 *
 * Depth-first without empty leaves ("dfs", what traversal reads by default; built at load time by
 * common/scene/kd_compact_layout.cpp, for the host and the devices alike): the same order, but an
 * empty leaf child is left out and marked in its parent, so no ray loads it (an eighth of the nodes
 * a primary ray visited on Crytek Sponza, and of the slots):
 *     word0 bit 4      the child below is an empty leaf (left out)
 *     word0 bits 5-31  index of the child above, 0 when it is an empty leaf (the root is no child)
 *     the child below, when there is one, follows its parent (after the reference slot)
 *   and a leaf's triangles lie beside it instead of in kd_leaf_refs: word1 holds the first, the
 *   slots that follow the others, two a slot (the last slot padded with TS_KD_NO_TRIANGLE), so a
 *   leaf's list is read without a dependent load (kd_leaf_triangles).
 *   Narrow lists (scenes with TS_SCENE_NARROW_LEAF_LISTS: the compact profile's tree): a leaf's
 *   count takes word0 bits 2-15 only (kd_narrow_leaf_count), and a leaf of two or more triangles has
 *   word1 = its lowest triangle | width code << 30; the others are differences from that lowest, 8,
 *   16 or 32 bits each (code 1, 2, 3: the narrowest their largest fits), packed from the low bits up
 *   in a stream that begins in word0 bits 16-31 (8- and 16-bit differences; 32-bit ones begin after
 *   the slot) and goes on in the words after the slot, so one decode serves every leaf without a
 *   branch (kd_list_triangle), and a leaf of up to three triangles takes one slot. The packer numbers
 *   nearby triangles close together (scene-packer/triangle_order.h), so most leaves take 8 bits a
 *   triangle (a quarter of a list's bytes), which lets the compact tree have smaller leaves.
 *
 * Blocked ("blocked", built at load time from the depth-first tree by common/scene/kd_blocked_layout.cpp,
 * selected with TESSERA_KD_LAYOUT=blocked and compiled with -D TS_KD_LAYOUT_BLOCKED=1): the slots are
 * grouped in aligned blocks of TS_KD_BLOCK_SLOTS (4 = 32 bytes, one L1/L2 sector; or 8 = 64 bytes).
 * A block holds a treelet: its top node, that node's children, and for 8-slot blocks their children
 * too, as far as they fit, so one block load serves 2 (or 3) levels of descent. Children are
 * addressed explicitly:
 *     word0 bits 4-6   delta - 1: the child above the plane is at below + delta, delta 1..8
 *     word0 bits 7-31  index of the child below the plane (25 bits)
 * A node's reference slot still follows it, in the same block. An inner child that does not fit in
 * its parent's block heads a block of its own; leaves fill the gaps, and unused slots hold empty
 * leaves. The root is node 0. The traversal keeps the last block it loaded in registers
 * (kd_load_node, TS_KD_NODE_CACHE), so a step to a node of the same block costs no memory access.
 * On Crytek Sponza half of the inner nodes have both children in their own block (70 % with
 * 64-byte blocks), for 18 % (26 %) more node bytes than depth-first. */
#ifndef TESSERA_KERNELS_ACCEL_KDTREE_LAYOUT_H
#define TESSERA_KERNELS_ACCEL_KDTREE_LAYOUT_H
#include "kernels/base/compat.h"
#include "kernels/scene/scene_view.h" /* ts_load_uint2, ts_load_uint4 */

#define TS_KD_LEAF 3u
#define TS_KD_NO_TRIANGLE 0xFFFFFFFFu
#define TS_KD_MAX_NODE_INDEX 0x0FFFFFFFu /* 28 bits for the far child (.tpk) */
#define TS_KD_COMPACT_MAX_NODE_INDEX 0x07FFFFFFu /* 27 bits (without empty leaves) */
#define TS_KD_NO_CHILD 0u /* an empty leaf left out (the root is no node's child) */
#define TS_KD_MAX_LEAF_COUNT 0x3FFFFFFFu
#define TS_KD_BLOCKED_MAX_NODE_INDEX 0x01FFFFFFu /* 25 bits for the below child */
#define TS_KD_BLOCKED_MAX_DELTA 8u

#ifndef TS_KD_LAYOUT_BLOCKED
#define TS_KD_LAYOUT_BLOCKED 0
#endif
#ifndef TS_KD_BLOCK_SLOTS
#define TS_KD_BLOCK_SLOTS 4
#endif
/* The register copy of the last node block: on by default with the blocked layout. */
#ifndef TS_KD_NODE_CACHE
#define TS_KD_NODE_CACHE TS_KD_LAYOUT_BLOCKED
#endif

TS_FN uint kd_node_kind(uint word0) { return word0 & 3u; }
TS_FN uint kd_inner_ref_count(uint word0) { return (word0 >> 2) & 3u; }
TS_FN uint kd_leaf_count(uint word0) { return word0 >> 2; }
#define TS_KD_NARROW_MAX_LEAF_COUNT 0x3FFFu /* 14 bits: word0 bits 16-31 begin the list */
TS_FN uint kd_narrow_leaf_count(uint word0) { return (word0 >> 2) & TS_KD_NARROW_MAX_LEAF_COUNT; }

/* Depth-first layout (.tpk). */
TS_FN uint kd_dfs_above_child(uint word0) { return word0 >> 4; }
TS_FN uint kd_dfs_below_child(uint node, uint word0) { return node + 1u + (kd_inner_ref_count(word0) ? 1u : 0u); }

/* Depth-first without empty leaves: TS_KD_NO_CHILD for a child left out. */
TS_FN uint kd_compact_above_child(uint word0) { return word0 >> 5; }
TS_FN uint kd_compact_below_child(uint node, uint word0) {
  return (word0 & 16u) ? TS_KD_NO_CHILD : node + 1u + (kd_inner_ref_count(word0) ? 1u : 0u);
}
TS_FN uint kd_make_compact_inner_word0(uint axis, uint ref_count, int below_empty, uint above_child) {
  return axis | (ref_count << 2) | (below_empty ? 16u : 0u) | (above_child << 5);
}

/* Blocked layout. */
TS_FN uint kd_blocked_below_child(uint word0) { return word0 >> 7; }
TS_FN uint kd_blocked_above_child(uint word0) { return (word0 >> 7) + ((word0 >> 4) & 7u) + 1u; }

/* The children in the layout the kernels are built for (blocked, or depth-first without empty
 * leaves); TS_KD_NO_CHILD only in the latter. */
TS_FN uint kd_inner_above_child(uint word0) {
#if TS_KD_LAYOUT_BLOCKED
  return kd_blocked_above_child(word0);
#else
  return kd_compact_above_child(word0);
#endif
}
TS_FN uint kd_inner_below_child(uint node, uint word0) {
#if TS_KD_LAYOUT_BLOCKED
  (void)node;
  return kd_blocked_below_child(word0);
#else
  return kd_compact_below_child(node, word0);
#endif
}

/* The child below of an inner node known to hold no triangle references (no slot to skip): the
 * traversal's walk loop, whose nodes hold none, saves the reference-count test. */
TS_FN uint kd_plain_below_child(uint node, uint word0) {
#if TS_KD_LAYOUT_BLOCKED
  (void)node;
  return kd_blocked_below_child(word0);
#else
  return (word0 & 16u) ? TS_KD_NO_CHILD : node + 1u;
#endif
}
TS_FN uint kd_make_inner_word0(uint axis, uint ref_count, uint above_child) {
  return axis | (ref_count << 2) | (above_child << 4);
}
/* below <= TS_KD_BLOCKED_MAX_NODE_INDEX, 1 <= above - below <= TS_KD_BLOCKED_MAX_DELTA */
TS_FN uint kd_make_blocked_inner_word0(uint axis, uint ref_count, uint below_child, uint above_child) {
  return axis | (ref_count << 2) | ((above_child - below_child - 1u) << 4) | (below_child << 7);
}
TS_FN uint kd_make_leaf_word0(uint count) { return TS_KD_LEAF | (count << 2); }

#define TS_KD_LIST_WIDTH_SHIFT 30u     /* a narrow list's width code in its leaf's word1 (triangles < 2^30) */
#define TS_KD_LIST_BASE_MASK 0x3FFFFFFFu

/* The width code of a narrow list whose largest difference from its lowest triangle is span. */
TS_FN uint kd_list_width_code(uint span) { return span <= 0xFFu ? 1u : (span <= 0xFFFFu ? 2u : 3u); }

/* Where difference j of a narrow list of width code `code` lies in its stream: bit 16 of word0 on,
 * then the words after the leaf's slot (stream word k >= 1 is the slot's word k + 1); 32-bit
 * differences begin at stream word 1. */
TS_FN uint kd_list_stream_bit(uint code, uint j) { return (code == 3u ? 32u : 16u) + (j << (code + 2u)); }

/* The difference of a narrow list of width code `code` at stream bit `bit` (refs: the leaf's word1,
 * word0: its word0). Stream word 0 is the leaf's word0, already in registers: a leaf of up to three
 * 8-bit differences (or one of 16) loads nothing. */
TS_FN uint kd_list_difference(TS_GLOBAL const uint* refs, uint word0, uint code, uint bit) {
  uint k = bit >> 5, word = word0;
  if (k) word = refs[k];
  return (word >> (bit & 31u)) & (0xFFFFFFFFu >> (32u - (4u << code)));
}

/* Triangle i of a list of triangle indices at refs whose first word is first (a leaf's word1, or
 * 0 for an inner node's reference slot): 32-bit indices, or a narrow list's differences (refs then
 * points at the leaf's word1, and word0 is the leaf's word0, where the stream begins). */
TS_FN uint kd_list_triangle(TS_GLOBAL const uint* refs, uint word0, uint first, uint i) {
  uint code = first >> TS_KD_LIST_WIDTH_SHIFT;
  if (code) {
    /* i = 0 is the lowest itself: it reads difference 0's word, which every list of two or more
     * has, and adds nothing */
    uint difference = kd_list_difference(refs, word0, code, kd_list_stream_bit(code, i ? i - 1u : 0u));
    return (first & TS_KD_LIST_BASE_MASK) + (i ? difference : 0u);
  }
  (void)word0;
  return refs[i];
}

/* A leaf's list read in order (the traversal's loop): for a narrow list the stream position
 * advances by one width a triangle instead of being computed from i (the lent H200 traced 1-2 %
 * more compact-profile rays). Triangle i, for i = 0, 1, ... in turn, is kd_list_next(&list, i), the
 * same as kd_list_triangle(refs, word0, first, i). */
typedef struct KdList {
  TS_GLOBAL const uint* refs;
  uint word0, first;
  uint bit; /* where the next difference lies in the stream (before triangle 0: one width early) */
} KdList;

TS_FN KdList kd_list_begin(TS_GLOBAL const uint* refs, uint word0, uint first) {
  KdList l;
  uint code = first >> TS_KD_LIST_WIDTH_SHIFT;
  l.refs = refs;
  l.word0 = word0;
  l.first = first;
  /* triangle 0 is the lowest itself and reads no difference: one width before the first one
   * (stream bit 8, 0 or 0, so stream word 0) */
  l.bit = kd_list_stream_bit(code, 0u) - (4u << code);
  return l;
}

TS_FN uint kd_list_next(KdList* l, uint i) {
  uint code = l->first >> TS_KD_LIST_WIDTH_SHIFT;
  if (code) {
    uint difference = kd_list_difference(l->refs, l->word0, code, l->bit);
    l->bit += 4u << code;
    return (l->first & TS_KD_LIST_BASE_MASK) + (i ? difference : 0u);
  }
  return l->refs[i];
}

/* The triangle indices of leaf `node` (first word word0, second word1): count of them from the
 * returned pointer, or word1 itself when count is 1 (callers read word1 from the pointer then). */
TS_FN TS_GLOBAL const uint* kd_leaf_triangles(TS_GLOBAL const uint* nodes, TS_GLOBAL const uint* leaf_refs, uint node,
                                             uint word0, uint word1) {
#if TS_KD_LAYOUT_BLOCKED
  return kd_leaf_count(word0) == 1u ? nodes + 2u * node + 1u : leaf_refs + word1;
#else
  (void)leaf_refs;
  (void)word0;
  (void)word1;
  return nodes + 2u * node + 1u;
#endif
}

/* Node loads. With TS_KD_NODE_CACHE the block holding the node is loaded whole (TS_KD_BLOCK_SLOTS
 * slots, 16-byte loads that do not depend on each other) and kept; the next node of the same block
 * comes from registers. The node buffer then holds whole blocks (its length is padded). */
typedef struct KdNodeCache {
  uint block; /* 0xFFFFFFFF: none */
  uint4 q0, q1;
#if TS_KD_BLOCK_SLOTS == 8
  uint4 q2, q3;
#endif
} KdNodeCache;

TS_FN void kd_node_cache_init(KdNodeCache* c) { c->block = 0xFFFFFFFFu; }

TS_FN uint2 kd_uint4_half(uint4 q, uint high) {
  uint2 v;
  v.x = high ? q.z : q.x;
  v.y = high ? q.w : q.y;
  return v;
}

TS_FN uint2 kd_load_node(KdNodeCache* c, TS_GLOBAL const uint* nodes, uint node) {
#if TS_KD_NODE_CACHE
#if TS_KD_BLOCK_SLOTS == 8
  uint block = node >> 3;
  uint4 q;
  if (block != c->block) {
    c->block = block;
    c->q0 = ts_load_uint4(nodes, 4u * block);
    c->q1 = ts_load_uint4(nodes, 4u * block + 1u);
    c->q2 = ts_load_uint4(nodes, 4u * block + 2u);
    c->q3 = ts_load_uint4(nodes, 4u * block + 3u);
  }
  q = (node & 4u) ? ((node & 2u) ? c->q3 : c->q2) : ((node & 2u) ? c->q1 : c->q0);
  return kd_uint4_half(q, node & 1u);
#else
  uint block = node >> 2;
  if (block != c->block) {
    c->block = block;
    c->q0 = ts_load_uint4(nodes, 2u * block);
    c->q1 = ts_load_uint4(nodes, 2u * block + 1u);
  }
  return kd_uint4_half((node & 2u) ? c->q1 : c->q0, node & 1u);
#endif
#else
  (void)c;
  return ts_load_uint2(nodes, node);
#endif
}

#endif
