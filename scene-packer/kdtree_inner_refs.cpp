// Inner-node triangle references and the collapse that follows; the heuristic is defined in the
// top comment of kdtree_builder.cpp.
#include "scene-packer/kdtree_inner_refs.h"

#include <algorithm>

namespace tessera::pack::kd {
namespace {

double section_area(const Box& b, int axis) {
  const int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
  return (double(b.max[a1]) - b.min[a1]) * (double(b.max[a2]) - b.min[a2]);
}

double occupancy(const Box& tri, const Box& node, int axis) {
  const double section = section_area(node, axis);
  if (!(section > 0.0)) return 0.0;
  double area = 1.0;
  for (int a : {(axis + 1) % 3, (axis + 2) % 3}) {
    const double lo = std::max(tri.min[a], node.min[a]), hi = std::min(tri.max[a], node.max[a]);
    area *= std::max(0.0, hi - lo);
  }
  return area / section;
}

class InnerRefPass {
 public:
  InnerRefPass(Tree& tree, const Mesh& mesh, const InnerRefOptions& options)
      : tree_(tree),
        mesh_(mesh),
        options_(options),
        count_below_(mesh.triangle_count(), 0),
        count_above_(mesh.triangle_count(), 0),
        saving_(mesh.triangle_count(), 0),
        mark_(mesh.triangle_count(), 0) {}

  void run() {
    place(0, tree_.bounds, 0);
    collapse(0, tree_.bounds);
  }

 private:
  struct Candidate {
    uint32_t tri;
    uint32_t leaves;
    uint32_t saving;  // bytes of leaf references freed by moving it
  };
  struct Collapse {
    double cost;
    uint64_t lo, hi;  // bounds on the number of distinct triangles in the subtree
    bool empty_leaf;
  };

  void place(uint32_t node, const Box& box, uint32_t path_refs) {
    if (tree_.nodes[node].is_leaf()) return;
    const uint32_t room = options_.max_path_references > path_refs ? options_.max_path_references - path_refs : 0;
    const uint32_t capacity = std::min(options_.max_refs_per_node, room);
    if (capacity > 0) choose(node, box, capacity);
    const Node& n = tree_.nodes[node];
    const int axis = int(n.axis);
    place(n.below, box.below(axis, n.split), path_refs + n.ref_count);
    place(n.above, box.above(axis, n.split), path_refs + n.ref_count);
  }

  void choose(uint32_t node, const Box& box, uint32_t capacity) {
    Node& n = tree_.nodes[node];
    touched_.clear();
    const uint64_t leaves = count_subtree(n.below, count_below_) + count_subtree(n.above, count_above_);
    std::vector<Candidate> chosen;
    for (uint32_t t : touched_) {
      const uint32_t in_leaves = count_below_[t] + count_above_[t];
      if (count_below_[t] > 0 && count_above_[t] > 0 &&
          double(in_leaves) >= double(options_.tau_frequency) * double(leaves) &&
          occupancy(mesh_.triangle_bounds(t), box, int(n.axis)) >= options_.tau_occupancy)
        chosen.push_back({t, in_leaves, saving_[t]});
      count_below_[t] = count_above_[t] = saving_[t] = 0;
    }
    if (chosen.empty()) return;
    std::sort(chosen.begin(), chosen.end(), [](const Candidate& a, const Candidate& b) {
      return a.leaves != b.leaves ? a.leaves > b.leaves : a.tri < b.tri;
    });
    // The node's first reference costs an 8-byte slot, a second one nothing: a candidate moves
    // only when it frees more than that.
    std::vector<uint32_t> moved;
    for (const Candidate& c : chosen) {
      if (n.ref_count >= capacity) break;
      if (c.saving <= (n.ref_count == 0 ? 8u : 0u)) continue;
      n.refs[n.ref_count++] = c.tri;
      mark_[c.tri] = 1;
      moved.push_back(c.tri);
    }
    if (moved.empty()) return;
    remove_marked(n.below);
    remove_marked(n.above);
    for (uint32_t t : moved) mark_[t] = 0;
  }

  // Counts, per triangle, the leaves of the subtree holding it; returns the number of leaves.
  uint64_t count_subtree(uint32_t root, std::vector<uint32_t>& counts) {
    uint64_t leaves = 0;
    stack_.assign(1, root);
    while (!stack_.empty()) {
      const Node& n = tree_.nodes[stack_.back()];
      stack_.pop_back();
      if (!n.is_leaf()) {
        stack_.push_back(n.above);
        stack_.push_back(n.below);
        continue;
      }
      ++leaves;
      // Leaving a list of 3+ frees 4 bytes, one of 2 frees 8 (the other goes inline), 1 nothing.
      const uint32_t saving = n.count >= 3 ? 4 : n.count == 2 ? 8 : 0;
      for (uint32_t i = n.first; i < n.first + n.count; ++i) {
        const uint32_t t = tree_.leaf_tris[i];
        if (count_below_[t] == 0 && count_above_[t] == 0) touched_.push_back(t);
        ++counts[t];
        saving_[t] += saving;
      }
    }
    return leaves;
  }

  void remove_marked(uint32_t root) {
    stack_.assign(1, root);
    while (!stack_.empty()) {
      Node& n = tree_.nodes[stack_.back()];
      stack_.pop_back();
      if (!n.is_leaf()) {
        stack_.push_back(n.above);
        stack_.push_back(n.below);
        continue;
      }
      uint32_t* list = tree_.leaf_tris.data() + n.first;
      n.count = uint32_t(std::remove_if(list, list + n.count, [&](uint32_t t) { return mark_[t] != 0; }) - list);
    }
  }

  Collapse collapse(uint32_t node, const Box& box) {
    Node& n = tree_.nodes[node];
    if (n.is_leaf()) return {tree_.costs.intersection * n.count, n.count, n.count, n.count == 0};
    const int axis = int(n.axis);
    const Box below_box = box.below(axis, n.split), above_box = box.above(axis, n.split);
    const Collapse below = collapse(n.below, below_box);
    const Collapse above = collapse(n.above, above_box);
    const double area = box.surface_area();
    const double p_below = area > 0.0 ? below_box.surface_area() / area : 1.0;
    const double p_above = area > 0.0 ? above_box.surface_area() / area : 1.0;
    const double lambda = (below.empty_leaf || above.empty_leaf) ? 1.0 - tree_.costs.empty_bonus : 1.0;
    const double cost = lambda * (tree_.costs.traversal + p_below * below.cost + p_above * above.cost) +
                        tree_.costs.intersection * n.ref_count;
    const uint64_t lo = std::max(below.lo, above.lo) + n.ref_count;
    const uint64_t hi = below.hi + above.hi + n.ref_count;
    if (tree_.costs.intersection * double(lo) > cost) return {cost, lo, hi, false};
    const uint64_t exact = gather_union(node);
    if (tree_.costs.intersection * double(exact) > cost) return {cost, exact, exact, false};
    Node& m = tree_.nodes[node];  // (no reallocation above, but stay explicit)
    m.axis = kLeaf;
    m.ref_count = 0;
    m.first = uint32_t(tree_.leaf_tris.size());
    m.count = uint32_t(union_.size());
    tree_.leaf_tris.insert(tree_.leaf_tris.end(), union_.begin(), union_.end());
    return {tree_.costs.intersection * double(exact), exact, exact, exact == 0};
  }

  // Distinct triangles of the subtree's leaves and inner references, sorted, into union_.
  uint64_t gather_union(uint32_t root) {
    union_.clear();
    auto add = [&](uint32_t t) {
      if (!mark_[t]) mark_[t] = 1, union_.push_back(t);
    };
    stack_.assign(1, root);
    while (!stack_.empty()) {
      const Node& n = tree_.nodes[stack_.back()];
      stack_.pop_back();
      if (n.is_leaf()) {
        for (uint32_t i = n.first; i < n.first + n.count; ++i) add(tree_.leaf_tris[i]);
        continue;
      }
      for (uint32_t r = 0; r < n.ref_count; ++r) add(n.refs[r]);
      stack_.push_back(n.above);
      stack_.push_back(n.below);
    }
    for (uint32_t t : union_) mark_[t] = 0;
    std::sort(union_.begin(), union_.end());
    return union_.size();
  }

  Tree& tree_;
  const Mesh& mesh_;
  const InnerRefOptions options_;
  std::vector<uint32_t> count_below_, count_above_, saving_;  // per triangle, zero between uses
  std::vector<uint8_t> mark_;                         // per triangle, zero between uses
  std::vector<uint32_t> touched_, stack_, union_;
};

}  // namespace

void add_inner_references(Tree& tree, const Mesh& mesh, const InnerRefOptions& options) {
  if (options.max_refs_per_node == 0 || tree.nodes.empty()) return;
  InnerRefPass(tree, mesh, options).run();
}

}  // namespace tessera::pack::kd
