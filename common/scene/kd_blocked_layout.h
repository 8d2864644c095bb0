#pragma once
// Which node layout of the kd-tree a device holds (kernels/accel/kdtree_layout.h), and the
// blocked layout built from the .tpk's depth-first one at load time. Both layouts describe the same
// tree, so traversal visits the same nodes in the same order and reports bit-identical hits.
//   TESSERA_KD_LAYOUT=dfs        depth-first without empty leaves (default; kd_compact_layout.h)
//   TESSERA_KD_LAYOUT=blocked    treelets in 32-byte blocks (node, both children)
//   TESSERA_KD_LAYOUT=blocked64  treelets in 64-byte blocks (node, children, grandchildren)
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

struct KdNodeLayout {
  bool blocked = false;
  uint32_t block_slots = 4;  // 8-byte slots a block (blocked layouts)

  std::string name() const;  // dfs, blocked, blocked64
  // The OpenCL build options the kernels need to read this layout ("" for dfs).
  std::string build_options() const;
};

// Parses a TESSERA_KD_LAYOUT value; throws Error naming the accepted values.
KdNodeLayout parse_kd_node_layout(std::string_view text);
// TESSERA_KD_LAYOUT, read once; dfs when unset or empty.
const KdNodeLayout& kd_node_layout_from_environment();

struct BlockedKdStats {
  uint64_t inner_nodes = 0;
  uint64_t inner_with_local_children = 0;  // children in the parent's block: a descent without a load
  uint64_t blocks = 0;
};

// The blocked layout of a validated depth-first node array (PackedScene checked it). Leaves keep
// their words, so kd_leaf_refs is shared unchanged. Throws Error when the tree needs more than
// TS_KD_BLOCKED_MAX_NODE_INDEX slots.
std::vector<uint32_t> make_blocked_kd_nodes(std::span<const uint32_t> dfs_nodes, uint32_t block_slots,
                                            BlockedKdStats* stats = nullptr);

// A node array padded with empty slots to whole 64-byte blocks, so a kernel built with
// TS_KD_NODE_CACHE (which loads whole blocks) can read it too.
std::vector<uint32_t> padded_dfs_kd_nodes(std::span<const uint32_t> dfs_nodes);

// The node array a device holds in `layout`: blocked, built from the .tpk's depth-first nodes (its
// leaves still read kd_leaf_refs), or the depth-first nodes without empty leaves that PackedScene
// built at load (common/scene/kd_compact_layout.h), padded.
std::vector<uint32_t> device_kd_nodes(std::span<const uint32_t> dfs_nodes, std::span<const uint32_t> compact_nodes,
                                      const KdNodeLayout& layout);

}  // namespace tessera
