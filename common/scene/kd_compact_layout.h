#pragma once
// The depth-first kd-tree without its empty leaves (kernels/accel/kdtree_layout.h, "depth-first
// without empty leaves"): what traversal reads on the host and, by default, on devices. Built at
// load time from the .tpk's depth-first nodes, so files keep their format.
#include <cstdint>
#include <span>
#include <vector>

namespace tessera {

// From a validated .tpk node array (PackedScene checked it). Leaves keep their words, so
// kd_leaf_refs is shared unchanged. Throws Error when the tree needs more than
// TS_KD_COMPACT_MAX_NODE_INDEX slots.
std::vector<uint32_t> make_compact_kd_nodes(std::span<const uint32_t> dfs_nodes);

}  // namespace tessera
