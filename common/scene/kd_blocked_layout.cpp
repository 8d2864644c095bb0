#include "common/scene/kd_blocked_layout.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <string>

#include "common/base/error.h"
#include "kernels/accel/kdtree_layout.h"

namespace tessera {
namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;
constexpr uint32_t kPadSlots = 8;  // the largest block

// One node of the depth-first array, with its children as depth-first indices.
struct DfsNode {
  uint32_t word0 = 0, word1 = 0;
  uint32_t ref0 = 0, ref1 = 0;  // the reference slot of an inner node holding references
  uint32_t below = kNone, above = kNone;
  bool inner() const { return kd_node_kind(word0) != TS_KD_LEAF; }
  bool has_refs() const { return inner() && kd_inner_ref_count(word0) != 0; }
  uint32_t slots() const { return has_refs() ? 2u : 1u; }
};

class BlockedLayoutBuilder {
 public:
  BlockedLayoutBuilder(std::span<const uint32_t> dfs, uint32_t block_slots) : dfs_(dfs), block_(block_slots) {}

  std::vector<uint32_t> build(BlockedKdStats* stats) {
    const uint32_t root = new_treelet_block(0);
    fill_block(0, root);
    if (stats) {
      stats->inner_nodes = inner_;
      stats->inner_with_local_children = local_;
      stats->blocks = free_.size();
    }
    return std::move(words_);
  }

 private:
  DfsNode node(uint32_t n) const {
    DfsNode d;
    d.word0 = dfs_[2 * size_t(n)];
    d.word1 = dfs_[2 * size_t(n) + 1];
    if (d.inner()) {
      if (d.has_refs()) {
        d.ref0 = dfs_[2 * size_t(n) + 2];
        d.ref1 = dfs_[2 * size_t(n) + 3];
      }
      d.below = kd_dfs_below_child(n, d.word0);
      d.above = kd_dfs_above_child(d.word0);
    }
    return d;
  }

  uint32_t new_block() {
    const uint64_t first = uint64_t(free_.size()) * block_;
    if (first + block_ - 1 > TS_KD_BLOCKED_MAX_NODE_INDEX)
      throw Error("kd-tree too large for the blocked node layout (25-bit child indices); use TESSERA_KD_LAYOUT=dfs");
    free_.push_back((1u << block_) - 1u);
    // empty slots read as empty leaves
    words_.resize(words_.size() + 2 * size_t(block_), 0u);
    for (uint32_t i = 0; i < block_; ++i) words_[2 * (first + i)] = kd_make_leaf_word0(0);
    return uint32_t(free_.size() - 1);
  }

  // A new block whose first slots are reserved for the treelet of `head`, before anything else
  // (a leaf looking for a free slot) can take them.
  uint32_t new_treelet_block(uint32_t head) {
    const uint32_t block = new_block();
    take(block * block_, treelet_slots(head));
    return block;
  }

  void offer_for_pairs(uint32_t block) {
    if (std::popcount(free_[block]) >= 2) pair_blocks_.push_back(block);
  }

  void take(uint32_t slot, uint32_t count) {
    for (uint32_t s = slot; s < slot + count; ++s) free_[s / block_] &= ~(1u << (s % block_));
  }

  // Writes node n at `slot` (and its reference slot after it); an inner node's word0 gets its
  // children later, in set_children.
  void put(const DfsNode& d, uint32_t slot) {
    take(slot, d.slots());
    words_[2 * size_t(slot)] = d.word0;
    words_[2 * size_t(slot) + 1] = d.word1;
    if (d.has_refs()) {
      words_[2 * size_t(slot) + 2] = d.ref0;
      words_[2 * size_t(slot) + 3] = d.ref1;
    }
  }

  void set_children(uint32_t slot, uint32_t below, uint32_t above) {
    if (above <= below || above - below > TS_KD_BLOCKED_MAX_DELTA)  // the placement rules exclude it
      throw Error("kd-tree blocked layout: children " + std::to_string(below) + " and " + std::to_string(above) +
                  " too far apart");
    const uint32_t w0 = words_[2 * size_t(slot)];
    ++inner_;
    local_ += below / block_ == slot / block_ && above / block_ == slot / block_;
    words_[2 * size_t(slot)] = kd_make_blocked_inner_word0(kd_node_kind(w0), kd_inner_ref_count(w0), below, above);
  }

  // Packs the treelet of depth-first node `head` into the empty block `block`: the head, then
  // children pairs breadth first while both children fit. Pairs that do not fit are placed after,
  // depth first, so subtrees stay together.
  void fill_block(uint32_t head, uint32_t block) {
    struct Placed {
      uint32_t dfs, slot;
    };
    std::vector<Placed> inner;  // inner nodes of this block, breadth first
    uint32_t next = block * block_;
    const uint32_t end = next + block_;
    const DfsNode h = node(head);
    put(h, next);
    if (h.inner()) inner.push_back({head, next});
    next += h.slots();
    std::vector<Placed> outside;  // inner nodes whose children go to other blocks
    for (size_t i = 0; i < inner.size(); ++i) {
      const DfsNode d = node(inner[i].dfs);
      const DfsNode b = node(d.below), a = node(d.above);
      if (next + b.slots() + a.slots() > end) {
        outside.push_back(inner[i]);
        continue;
      }
      put(b, next);
      put(a, next + b.slots());
      set_children(inner[i].slot, next, next + b.slots());
      if (b.inner()) inner.push_back({d.below, next});
      if (a.inner()) inner.push_back({d.above, next + b.slots()});
      next += b.slots() + a.slots();
    }
    for (const Placed& p : outside) {
      const DfsNode d = node(p.dfs);
      place_pair(p.slot, d.below, d.above);
    }
  }

  // A free slot of `block` able to hold `count` slots, or kNone.
  uint32_t free_slot(uint32_t block, uint32_t count) const {
    const uint32_t run = (1u << count) - 1u;
    for (uint32_t p = 0; p + count <= block_; ++p)
      if (((free_[block] >> p) & run) == run) return block * block_ + p;
    return kNone;
  }

  // Places the children of the inner node at `parent` outside its block, below child first and the
  // above child 1..8 slots after it; inner children head blocks of their own.
  void place_pair(uint32_t parent, uint32_t below, uint32_t above) {
    const DfsNode b = node(below), a = node(above);
    uint32_t bslot, aslot;
    if (b.inner() && a.inner()) {
      const uint32_t bb = new_treelet_block(below), ab = new_treelet_block(above);  // above = below + block
      bslot = bb * block_;
      aslot = ab * block_;
      set_children(parent, bslot, aslot);
      offer_for_pairs(bb);
      offer_for_pairs(ab);
      fill_block(below, bb);
      fill_block(above, ab);
      return;
    }
    if (b.inner()) {  // leaf above: right after the below child's treelet
      const uint32_t bb = new_treelet_block(below);
      const uint32_t treelet = treelet_slots(below);
      bslot = bb * block_;
      aslot = treelet + a.slots() <= block_ ? bslot + treelet : new_block() * block_;
      put(a, aslot);
      set_children(parent, bslot, aslot);
      offer_for_pairs(bb);
      offer_for_pairs(aslot / block_);
      fill_block(below, bb);
      return;
    }
    if (a.inner()) {  // leaf below: in the block just before the above child's
      const uint32_t last = uint32_t(free_.size() - 1);
      bslot = free_slot(last, b.slots());
      if (bslot == kNone) bslot = new_block() * block_;
      put(b, bslot);
      offer_for_pairs(bslot / block_);
      const uint32_t ab = new_treelet_block(above);
      aslot = ab * block_;
      set_children(parent, bslot, aslot);
      offer_for_pairs(ab);
      fill_block(above, ab);
      return;
    }
    // two leaves: any block with two free slots, else a new one
    bslot = kNone;
    while (!pair_blocks_.empty() && bslot == kNone) {
      const uint32_t blk = pair_blocks_.back();
      bslot = free_slot(blk, 1);
      const uint32_t second = bslot == kNone ? kNone : free_slot_after(blk, bslot);
      if (second == kNone) {
        pair_blocks_.pop_back();
        bslot = kNone;
        continue;
      }
      aslot = second;
    }
    if (bslot == kNone) {
      const uint32_t blk = new_block();
      bslot = blk * block_;
      aslot = bslot + 1;
      pair_blocks_.push_back(blk);
    }
    put(b, bslot);
    put(a, aslot);
    set_children(parent, bslot, aslot);
  }

  uint32_t free_slot_after(uint32_t block, uint32_t slot) const {
    for (uint32_t s = slot + 1; s < (block + 1) * block_; ++s)
      if (free_[block] >> (s % block_) & 1u) return s;
    return kNone;
  }

  // Slots the treelet headed by inner node `head` takes in its block (as fill_block packs it).
  uint32_t treelet_slots(uint32_t head) const {
    if (!node(head).inner()) return 1;
    std::vector<uint32_t> inner{head};
    uint32_t used = node(head).slots();
    for (size_t i = 0; i < inner.size(); ++i) {
      const DfsNode d = node(inner[i]);
      const DfsNode b = node(d.below), a = node(d.above);
      if (used + b.slots() + a.slots() > block_) continue;
      used += b.slots() + a.slots();
      if (b.inner()) inner.push_back(d.below);
      if (a.inner()) inner.push_back(d.above);
    }
    return used;
  }

  std::span<const uint32_t> dfs_;
  const uint32_t block_;
  std::vector<uint32_t> words_;
  std::vector<uint32_t> free_;         // per block: bit p set while slot p is free
  std::vector<uint32_t> pair_blocks_;  // blocks that may still hold a pair of leaves
  uint64_t inner_ = 0, local_ = 0;
};

}  // namespace

std::string KdNodeLayout::name() const {
  if (!blocked) return "dfs";
  return block_slots == 8 ? "blocked64" : "blocked";
}

std::string KdNodeLayout::build_options() const {
  if (!blocked) return {};
  return "-D TS_KD_LAYOUT_BLOCKED=1 -D TS_KD_BLOCK_SLOTS=" + std::to_string(block_slots);
}

KdNodeLayout parse_kd_node_layout(std::string_view text) {
  if (text.empty() || text == "dfs") return {};
  if (text == "blocked") return {true, 4};
  if (text == "blocked64") return {true, 8};
  throw Error("TESSERA_KD_LAYOUT must be dfs, blocked or blocked64, not '" + std::string(text) + "'");
}

const KdNodeLayout& kd_node_layout_from_environment() {
  static const KdNodeLayout layout = [] {
    const char* env = std::getenv("TESSERA_KD_LAYOUT");
    return parse_kd_node_layout(env ? env : "");
  }();
  return layout;
}

std::vector<uint32_t> make_blocked_kd_nodes(std::span<const uint32_t> dfs_nodes, uint32_t block_slots,
                                            BlockedKdStats* stats) {
  if (block_slots != 4 && block_slots != 8) throw Error("kd-tree blocks hold 4 or 8 slots");
  if (dfs_nodes.size() < 2) throw Error("kd-tree has no nodes");
  return BlockedLayoutBuilder(dfs_nodes, block_slots).build(stats);
}

std::vector<uint32_t> padded_dfs_kd_nodes(std::span<const uint32_t> dfs_nodes) {
  std::vector<uint32_t> words(dfs_nodes.begin(), dfs_nodes.end());
  while (words.size() % (2 * kPadSlots)) {
    words.push_back(kd_make_leaf_word0(0));
    words.push_back(0u);
  }
  return words;
}

std::vector<uint32_t> device_kd_nodes(std::span<const uint32_t> dfs_nodes, std::span<const uint32_t> compact_nodes,
                                      const KdNodeLayout& layout) {
  return layout.blocked ? make_blocked_kd_nodes(dfs_nodes, layout.block_slots) : padded_dfs_kd_nodes(compact_nodes);
}

}  // namespace tessera
