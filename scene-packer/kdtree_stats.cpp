#include "scene-packer/kdtree_stats.h"

#include <algorithm>

namespace tessera::pack::kd {
namespace {

// sah_cost: plain SAH (no empty-space bonus) of the whole tree, i.e. the expected number of
// cost units for a ray through the root box: sum over nodes of P(node) * local cost.
void visit(const Tree& tree, uint32_t node, const Box& box, uint32_t depth, double inv_root_area,
           KdTreeStats& s) {
  const Node& n = tree.nodes[node];
  const double p = box.surface_area() * inv_root_area;
  if (n.is_leaf()) {
    ++s.leaves;
    s.empty_leaves += n.count == 0;
    s.leaf_references += n.count;
    s.max_depth = std::max(s.max_depth, depth);
    s.sah_cost += p * tree.costs.intersection * n.count;
    return;
  }
  if (n.ref_count > 0)
    ++s.inner_nodes_with_refs;
  else
    ++s.inner_nodes_without_refs;
  s.inner_references += n.ref_count;
  s.sah_cost += p * (tree.costs.traversal + tree.costs.intersection * n.ref_count);
  const int axis = int(n.axis);
  visit(tree, n.below, box.below(axis, n.split), depth + 1, inv_root_area, s);
  visit(tree, n.above, box.above(axis, n.split), depth + 1, inv_root_area, s);
}

}  // namespace

KdTreeStats tree_stats(const Tree& tree) {
  KdTreeStats s;
  const double area = tree.bounds.surface_area();
  visit(tree, 0, tree.bounds, 0, area > 0.0 ? 1.0 / area : 0.0, s);
  return s;
}

}  // namespace tessera::pack::kd
