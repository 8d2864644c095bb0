#pragma once
// Pruning a kd-tree to a budget of device bytes: the compact scene-memory profile's tree
// (docs/scene-memory.md). A tree built with small leaves is cut back, two sibling leaves at a time
// merged into their parent, always the merge that adds the least expected ray cost for the bytes it
// saves, until the tree fits the budget. A ray reaches a node with the probability the SAH gives it
// (its surface area over the root's), plus, for rays that start on surfaces (shadow and bounce
// rays), a share of the triangle area it holds: the merges that go first are those of small cells
// few rays reach, so a byte budget costs far fewer triangle tests than raising the SAH traversal
// cost of the whole build to the same bytes (Crytek Sponza at 15 B/tri: 7.2 tests a random ray
// instead of 9.1, docs/scene-memory.md).
#include <cstddef>

#include "scene-packer/kdtree_tree.h"

namespace tessera::pack::kd {

struct PruneOptions {
  // Bytes a triangle the tree may take in the compact device layout (nodes and narrow leaf lists,
  // common/scene/kd_compact_layout.h); 0: no pruning.
  double bytes_per_triangle = 0.0;
  double traversal_cost = 1.5;   // the cost model's K_T (K_I = 1): what an inner node costs a ray that reaches it
  double surface_weight = 0.1;   // weight of the triangle-area share in a node's probability
};

// Merges sibling leaves of `tree` (over `mesh`) until it fits options.bytes_per_triangle or no merge
// is left; returns the merges made. Every merged leaf holds every triangle its cells held, so
// traversal finds the same hits. Deterministic: the same tree gives the same result.
size_t prune_to_budget(Tree& tree, const Mesh& mesh, const PruneOptions& options);

}  // namespace tessera::pack::kd
