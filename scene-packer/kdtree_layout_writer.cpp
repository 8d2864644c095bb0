#include "scene-packer/kdtree_layout_writer.h"

#include <algorithm>
#include <bit>
#include <string>
#include <unordered_map>

#include "common/base/error.h"
#include "common/base/hash.h"
#include "kernels/accel/kdtree_layout.h"

namespace tessera::pack::kd {
namespace {

constexpr uint32_t kMaxOverlap = 64;  // how far back the tail of leaf_refs is searched

// Lays out the lists of leaves with two or more triangles in leaf_refs. The order inside a list
// is free, and neighbouring leaves (in depth-first order) share the triangles cut by the splits
// between them, so each list starts with whatever tail of leaf_refs it shares and ends with what
// it shares with the next leaf, where that leaf can overlap it in turn. Identical lists anywhere
// are stored once.
class LeafListPacker {
 public:
  LeafListPacker(std::vector<uint32_t>& refs, size_t triangle_count) : refs_(refs), mark_(triangle_count, 0) {}

  // list: this leaf's triangles; next: the next leaf's (may be empty). Returns the offset.
  uint32_t place(std::span<const uint32_t> list, std::span<const uint32_t> next) {
    const uint64_t h = hash64(list.data(), sizeof(uint32_t) * list.size());
    auto& same_hash = by_hash_[h];
    for (uint32_t off : same_hash)
      if (std::equal(list.begin(), list.end(), sorted_.begin() + off)) return offset_of_[off];

    for (uint32_t t : list) mark_[t] = 1;
    // Longest tail of refs_ made of distinct members of list.
    size_t overlap = 0;
    const size_t limit = std::min<size_t>({refs_.size(), list.size(), kMaxOverlap});
    while (overlap < limit && mark_[refs_[refs_.size() - 1 - overlap]] == 1) {
      mark_[refs_[refs_.size() - 1 - overlap]] = 2;  // 2: already in place
      ++overlap;
    }
    for (uint32_t t : next)
      if (mark_[t] == 1) mark_[t] = 3;  // 3: shared with the next leaf, goes last
    const size_t offset = refs_.size() - overlap;
    if (offset + list.size() > 0xFFFFFFFFull) throw Error("kd-tree leaf references exceed 32-bit offsets");
    for (uint32_t t : list)
      if (mark_[t] == 1) refs_.push_back(t);
    for (uint32_t t : list)
      if (mark_[t] == 3) refs_.push_back(t);
    for (uint32_t t : list) mark_[t] = 0;

    same_hash.push_back(uint32_t(sorted_.size()));
    sorted_.insert(sorted_.end(), list.begin(), list.end());
    offset_of_.resize(sorted_.size());
    offset_of_[sorted_.size() - list.size()] = uint32_t(offset);
    return uint32_t(offset);
  }

 private:
  std::vector<uint32_t>& refs_;
  std::vector<uint8_t> mark_;
  std::vector<uint32_t> sorted_;     // every distinct list placed, as given (sorted)
  std::vector<uint32_t> offset_of_;  // start in sorted_ -> offset in refs_
  std::unordered_map<uint64_t, std::vector<uint32_t>> by_hash_;
};

}  // namespace

void write_layout(const Tree& tree, PackedKdTree* out) {
  std::vector<uint32_t>& words = out->nodes;
  words.clear();
  out->leaf_refs.clear();
  constexpr uint32_t kNoParent = 0xFFFFFFFFu;
  struct Item {
    uint32_t node;
    uint32_t parent_slot;  // slot whose above-child index is this node's slot
  };
  struct ListLeaf {
    size_t slot;
    uint32_t node;
  };
  std::vector<ListLeaf> list_leaves;  // leaves with two or more triangles, depth-first order
  size_t max_tri = 0;
  std::vector<Item> stack{{0, kNoParent}};
  while (!stack.empty()) {
    const Item item = stack.back();
    stack.pop_back();
    const size_t slot = words.size() / 2;
    if (slot > TS_KD_MAX_NODE_INDEX) throw Error("kd-tree has too many nodes for 28-bit child indices");
    if (item.parent_slot != kNoParent) words[2 * size_t(item.parent_slot)] |= uint32_t(slot) << 4;
    const Node& n = tree.nodes[item.node];
    if (n.is_leaf()) {
      if (n.count > TS_KD_MAX_LEAF_COUNT) throw Error("kd-tree leaf holds too many triangles");
      const uint32_t* list = tree.leaf_tris.data() + n.first;
      words.push_back(kd_make_leaf_word0(n.count));
      words.push_back(n.count == 1 ? list[0] : 0u);  // lists get their offsets below
      if (n.count >= 2) {
        list_leaves.push_back({slot, item.node});
        max_tri = std::max<size_t>(max_tri, *std::max_element(list, list + n.count));
      }
      continue;
    }
    words.push_back(kd_make_inner_word0(n.axis, n.ref_count, 0));
    words.push_back(std::bit_cast<uint32_t>(n.split));
    if (n.ref_count > 0) {
      words.push_back(n.refs[0]);
      words.push_back(n.ref_count > 1 ? n.refs[1] : TS_KD_NO_TRIANGLE);
    }
    stack.push_back({n.above, uint32_t(slot)});
    stack.push_back({n.below, kNoParent});  // popped next: the below child follows its parent
  }

  LeafListPacker packer(out->leaf_refs, max_tri + 1);
  auto list_of = [&](size_t i) {
    const Node& n = tree.nodes[list_leaves[i].node];
    return std::span<const uint32_t>(tree.leaf_tris.data() + n.first, n.count);
  };
  for (size_t i = 0; i < list_leaves.size(); ++i) {
    const auto next = i + 1 < list_leaves.size() ? list_of(i + 1) : std::span<const uint32_t>();
    words[2 * list_leaves[i].slot + 1] = packer.place(list_of(i), next);
  }
}

}  // namespace tessera::pack::kd
