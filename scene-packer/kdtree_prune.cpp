#include "scene-packer/kdtree_prune.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <iterator>
#include <queue>
#include <utility>
#include <vector>

#include "common/scene/kd_compact_layout.h"
#include "kernels/accel/kdtree_layout.h"

namespace tessera::pack::kd {
namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;

std::span<const uint32_t> leaf_list(const Tree& tree, const Node& n) {
  return std::span<const uint32_t>(tree.leaf_tris).subspan(n.first, n.count);
}

uint64_t leaf_bytes(std::span<const uint32_t> sorted) {
  if (sorted.empty()) return 0;  // left out of the layout
  return 8u * uint64_t(narrow_leaf_slots(uint32_t(sorted.size()), sorted.back() - sorted.front()));
}

uint64_t inner_bytes(const Node& n) { return n.ref_count ? 16 : 8; }

uint64_t node_bytes(const Tree& tree, const Node& n) {
  return n.is_leaf() ? leaf_bytes(leaf_list(tree, n)) : inner_bytes(n);
}

// The nodes reachable from the root, parents first.
std::vector<uint32_t> reachable(const Tree& tree) {
  std::vector<uint32_t> order, stack{0};
  while (!stack.empty()) {
    const uint32_t n = stack.back();
    stack.pop_back();
    order.push_back(n);
    if (!tree.nodes[n].is_leaf()) stack.insert(stack.end(), {tree.nodes[n].above, tree.nodes[n].below});
  }
  return order;
}

class Pruner {
 public:
  Pruner(Tree& tree, const Mesh& mesh, const PruneOptions& options) : tree_(tree), options_(options) {
    const size_t nodes = tree.nodes.size();
    parent_.assign(nodes, kNone);
    probability_.assign(nodes, 0.0);
    const std::vector<uint32_t> order = reachable(tree);
    // a node's box, its parent's split applied
    std::vector<Box> box(nodes);
    box[0] = tree.bounds;
    for (uint32_t n : order) {
      const Node& node = tree.nodes[n];
      if (node.is_leaf()) continue;
      parent_[node.below] = parent_[node.above] = n;
      box[node.below] = box[n].below(int(node.axis), node.split);
      box[node.above] = box[n].above(int(node.axis), node.split);
    }
    // the triangle area each node holds: a triangle's area shared equally among its references
    std::vector<uint32_t> references(mesh.triangle_count(), 0);
    auto for_each_ref = [&](const Node& node, const std::function<void(uint32_t)>& f) {
      if (node.is_leaf())
        for (uint32_t t : leaf_list(tree, node)) f(t);
      else
        for (uint32_t r = 0; r < node.ref_count; ++r) f(node.refs[r]);
    };
    for (uint32_t n : order) for_each_ref(tree.nodes[n], [&](uint32_t t) { ++references[t]; });
    std::vector<double> held(nodes, 0.0);
    double total_area = 0.0;
    auto area_of = [&](uint32_t t) {
      std::array<double, 3> p[3];
      for (int c = 0; c < 3; ++c) {
        const auto v = mesh.vertex(t, c);
        p[c] = {v[0], v[1], v[2]};
      }
      const double ux = p[1][0] - p[0][0], uy = p[1][1] - p[0][1], uz = p[1][2] - p[0][2];
      const double vx = p[2][0] - p[0][0], vy = p[2][1] - p[0][1], vz = p[2][2] - p[0][2];
      const double cx = uy * vz - uz * vy, cy = uz * vx - ux * vz, cz = ux * vy - uy * vx;
      return 0.5 * std::sqrt(cx * cx + cy * cy + cz * cz);
    };
    std::vector<double> area(mesh.triangle_count(), 0.0);
    for (uint32_t t = 0; t < mesh.triangle_count(); ++t) {
      area[t] = area_of(t);
      total_area += area[t];
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {  // children before parents
      const Node& node = tree.nodes[*it];
      for_each_ref(node, [&](uint32_t t) { held[*it] += area[t] / references[t]; });
      if (!node.is_leaf()) held[*it] += held[node.below] + held[node.above];
    }
    const double root_area = tree.bounds.surface_area();
    for (uint32_t n : order) {
      probability_[n] = (root_area > 0.0 ? box[n].surface_area() / root_area : 0.0) +
                        (total_area > 0.0 ? options.surface_weight * held[n] / total_area : 0.0);
      bytes_ += node_bytes(tree, tree.nodes[n]);
    }
    for (uint32_t n : order) push(n);
  }

  size_t run(uint64_t budget) {
    size_t merges = 0;
    std::vector<uint32_t> merged;
    while (bytes_ > budget && !queue_.empty()) {
      const auto [ratio, n] = queue_.top();
      queue_.pop();
      double now;
      if (!candidate(n, &now, &merged) || now != ratio) continue;  // changed since it was queued
      Node& node = tree_.nodes[n];
      bytes_ -= inner_bytes(node) + node_bytes(tree_, tree_.nodes[node.below]) +
                node_bytes(tree_, tree_.nodes[node.above]);
      node.axis = kLeaf;
      node.ref_count = 0;
      node.first = uint32_t(tree_.leaf_tris.size());
      node.count = uint32_t(merged.size());
      tree_.leaf_tris.insert(tree_.leaf_tris.end(), merged.begin(), merged.end());
      bytes_ += leaf_bytes(merged);
      ++merges;
      if (parent_[n] != kNone) push(parent_[n]);
    }
    return merges;
  }

 private:
  // Whether inner node n has two leaf children and may become one leaf: the ratio of the expected
  // ray cost the merge adds to the bytes it saves, and the merged list.
  bool candidate(uint32_t n, double* ratio, std::vector<uint32_t>* merged) const {
    const Node& node = tree_.nodes[n];
    if (node.is_leaf()) return false;
    const Node &below = tree_.nodes[node.below], &above = tree_.nodes[node.above];
    if (!below.is_leaf() || !above.is_leaf()) return false;
    const auto a = leaf_list(tree_, below), b = leaf_list(tree_, above);
    merged->clear();
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(*merged));
    for (uint32_t r = 0; r < node.ref_count; ++r)
      if (!std::binary_search(merged->begin(), merged->end(), node.refs[r]))
        merged->insert(std::upper_bound(merged->begin(), merged->end(), node.refs[r]), node.refs[r]);
    if (merged->size() > TS_KD_NARROW_MAX_LEAF_COUNT) return false;
    const double cost_added =
        probability_[n] * (double(merged->size()) - options_.traversal_cost - node.ref_count) -
        probability_[node.below] * double(a.size()) - probability_[node.above] * double(b.size());
    const double saved = double(inner_bytes(node) + leaf_bytes(a) + leaf_bytes(b)) - double(leaf_bytes(*merged));
    if (saved <= 0.0) return false;  // saves nothing (never needed for the budget)
    *ratio = cost_added / saved;
    return true;
  }

  void push(uint32_t n) {
    double ratio;
    if (candidate(n, &ratio, &scratch_)) queue_.push({ratio, n});
  }

  Tree& tree_;
  const PruneOptions& options_;
  std::vector<uint32_t> parent_;
  std::vector<double> probability_;
  uint64_t bytes_ = 0;
  std::vector<uint32_t> scratch_;  // a merged list push() computes and drops
  // lowest ratio first; among equal ratios the lowest node (deterministic)
  std::priority_queue<std::pair<double, uint32_t>, std::vector<std::pair<double, uint32_t>>, std::greater<>> queue_;
};

}  // namespace

size_t prune_to_budget(Tree& tree, const Mesh& mesh, const PruneOptions& options) {
  if (options.bytes_per_triangle <= 0.0 || tree.nodes.empty()) return 0;
  const uint64_t budget = uint64_t(options.bytes_per_triangle * mesh.triangle_count());
  Pruner pruner(tree, mesh, options);
  return pruner.run(budget);
}

}  // namespace tessera::pack::kd
