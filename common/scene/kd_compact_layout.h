#pragma once
// The depth-first kd-tree without its empty leaves and with each leaf's triangle list beside it
// (kernels/accel/kdtree_layout.h, "depth-first without empty leaves"): what traversal reads on the
// host and, by default, on devices. Built at load time from the .tpk's depth-first nodes and leaf
// lists, so files keep their format.
#include <cstdint>
#include <span>
#include <vector>

namespace tessera {

// Whether a validated .tpk tree can take narrow lists: no leaf of more than
// TS_KD_NARROW_MAX_LEAF_COUNT triangles, no triangle index beyond TS_KD_LIST_BASE_MASK.
bool narrow_leaf_lists_fit(std::span<const uint32_t> dfs_nodes, std::span<const uint32_t> leaf_refs);

// The 8-byte slots a leaf of `count` triangles whose highest index lies `span` above its lowest takes
// with narrow lists (0 for an empty leaf, which the layout leaves out): what make_compact_kd_nodes writes.
uint32_t narrow_leaf_slots(uint32_t count, uint32_t span);

// From a validated .tpk node array and its leaf lists (PackedScene checked them); the result needs
// no leaf lists of its own. narrow: every list holds its triangles as 8-, 16- or 32-bit differences
// from its lowest (kd_list_triangle; traversal then needs TS_SCENE_NARROW_LEAF_LISTS). Throws Error
// when the tree needs more than TS_KD_COMPACT_MAX_NODE_INDEX slots (or, narrow, when the lists do not
// fit: narrow_leaf_lists_fit).
std::vector<uint32_t> make_compact_kd_nodes(std::span<const uint32_t> dfs_nodes, std::span<const uint32_t> leaf_refs,
                                            bool narrow = false);

}  // namespace tessera
