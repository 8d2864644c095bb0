#include "common/scene/kd_compact_layout.h"

#include <algorithm>

#include "common/base/error.h"
#include "kernels/accel/kdtree_layout.h"

namespace tessera {
namespace {

constexpr const char* kTooManyTriangles = "kd-tree has triangle indices beyond 2^30, too large for narrow leaf lists";
constexpr const char* kLeafTooLarge = "kd-tree has a leaf of more than 16,383 triangles, too many for a narrow leaf list";

bool is_empty_leaf(std::span<const uint32_t> nodes, uint32_t node) {
  const uint32_t w0 = nodes[2 * size_t(node)];
  return kd_node_kind(w0) == TS_KD_LEAF && kd_leaf_count(w0) == 0;
}

}  // namespace

uint32_t narrow_leaf_slots(uint32_t count, uint32_t span) {
  if (count <= 1) return count;
  // the last difference's stream word k lies at the slot's word k + 1 (word0 for k = 0)
  const uint32_t code = kd_list_width_code(span);
  const uint32_t last_word = (kd_list_stream_bit(code, count - 2) + (4u << code) - 1) / 32;
  return (2 + last_word + 1) / 2;
}

bool narrow_leaf_lists_fit(std::span<const uint32_t> dfs_nodes, std::span<const uint32_t> leaf_refs) {
  for (size_t n = 0; n < dfs_nodes.size() / 2; ++n) {
    const uint32_t w0 = dfs_nodes[2 * n], w1 = dfs_nodes[2 * n + 1];
    if (kd_node_kind(w0) != TS_KD_LEAF) {
      n += kd_inner_ref_count(w0) ? 1 : 0;  // its reference slot
      continue;
    }
    const uint32_t count = kd_leaf_count(w0);
    if (count > TS_KD_NARROW_MAX_LEAF_COUNT || (count == 1 && w1 > TS_KD_LIST_BASE_MASK)) return false;
    if (count <= 1) continue;
    if (w1 > leaf_refs.size() || count > leaf_refs.size() - w1) return false;  // not a leaf traversal reaches
    for (uint32_t t : leaf_refs.subspan(w1, count))
      if (t > TS_KD_LIST_BASE_MASK) return false;
  }
  return true;
}

std::vector<uint32_t> make_compact_kd_nodes(std::span<const uint32_t> dfs_nodes, std::span<const uint32_t> leaf_refs,
                                            bool narrow) {
  std::vector<uint32_t> out;
  out.reserve(dfs_nodes.size());
  constexpr uint32_t kNoParent = 0xFFFFFFFFu;
  struct Item {
    uint32_t node;         // in dfs_nodes
    uint32_t above_of;     // slot in `out` whose above-child index this node is, or kNoParent
  };
  std::vector<Item> stack{{0, kNoParent}};
  std::vector<uint32_t> sorted;
  while (!stack.empty()) {
    const Item item = stack.back();
    stack.pop_back();
    const size_t slot = out.size() / 2;
    if (slot > TS_KD_COMPACT_MAX_NODE_INDEX) throw Error("kd-tree has too many nodes for 27-bit child indices");
    if (item.above_of != kNoParent) out[2 * size_t(item.above_of)] |= uint32_t(slot) << 5;
    const uint32_t w0 = dfs_nodes[2 * size_t(item.node)], w1 = dfs_nodes[2 * size_t(item.node) + 1];
    if (kd_node_kind(w0) == TS_KD_LEAF) {
      // word1 holds the first triangle, the slots after it the others
      const uint32_t count = kd_leaf_count(w0);
      out.push_back(w0);
      if (count <= 1) {
        if (narrow && count == 1 && w1 > TS_KD_LIST_BASE_MASK) throw Error(kTooManyTriangles);
        out.push_back(w1);
        continue;
      }
      const std::span<const uint32_t> list = leaf_refs.subspan(w1, count);
      if (narrow) {
        // the lowest in word1 with the width code, the others as differences from it in the stream
        // that begins in word0's high half (kd_list_stream_bit)
        if (count > TS_KD_NARROW_MAX_LEAF_COUNT) throw Error(kLeafTooLarge);
        sorted.assign(list.begin(), list.end());
        std::sort(sorted.begin(), sorted.end());
        if (sorted.back() > TS_KD_LIST_BASE_MASK) throw Error(kTooManyTriangles);
        const uint32_t code = kd_list_width_code(sorted.back() - sorted[0]);
        out.push_back(sorted[0] | code << TS_KD_LIST_WIDTH_SHIFT);
        for (uint32_t i = 1; i < count; ++i) {
          const uint32_t bit = kd_list_stream_bit(code, i - 1), k = bit / 32;
          const size_t at = k ? 2 * slot + 1 + k : 2 * slot;
          if (at >= out.size()) out.resize(at + 1, 0);
          out[at] |= (sorted[i] - sorted[0]) << (bit % 32);
        }
      } else {
        out.insert(out.end(), list.begin(), list.end());
      }
      if (out.size() % 2) out.push_back(TS_KD_NO_TRIANGLE);
      continue;
    }
    const uint32_t refs = kd_inner_ref_count(w0);
    const uint32_t below = kd_dfs_below_child(item.node, w0), above = kd_dfs_above_child(w0);
    const bool below_empty = is_empty_leaf(dfs_nodes, below);
    out.push_back(kd_make_compact_inner_word0(kd_node_kind(w0), refs, below_empty, 0));
    out.push_back(w1);
    if (refs) {  // the reference slot follows its node
      out.push_back(dfs_nodes[2 * size_t(item.node) + 2]);
      out.push_back(dfs_nodes[2 * size_t(item.node) + 3]);
    }
    if (!is_empty_leaf(dfs_nodes, above)) stack.push_back({above, uint32_t(slot)});
    if (!below_empty) stack.push_back({below, kNoParent});  // popped next: follows its parent
  }
  return out;
}

}  // namespace tessera
