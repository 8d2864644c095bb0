#pragma once
// The depth-first kd-tree without its empty leaves and with each leaf's triangle list beside it
// (kernels/accel/kdtree_layout.h, "depth-first without empty leaves"): what traversal reads on the
// host and, by default, on devices. Built at load time from the .tpk's depth-first nodes and leaf
// lists, so files keep their format.
#include <cstdint>
#include <span>
#include <vector>

namespace tessera {

// From a validated .tpk node array and its leaf lists (PackedScene checked them); the result needs
// no leaf lists of its own. narrow: lists whose triangles lie within 2^16 of their lowest take 16
// bits a triangle (TS_KD_NARROW_LIST; traversal then needs TS_SCENE_NARROW_LEAF_LISTS). Throws
// Error when the tree needs more than TS_KD_COMPACT_MAX_NODE_INDEX slots.
std::vector<uint32_t> make_compact_kd_nodes(std::span<const uint32_t> dfs_nodes, std::span<const uint32_t> leaf_refs,
                                            bool narrow = false);

}  // namespace tessera
