#pragma once
// Moves triangles that a standard SAH tree duplicates into many leaves up into inner nodes
// (Choi et al. 2013: one reference a node; Seo et al. 2017: two), then collapses the subtrees
// that no longer pay for themselves. The heuristic is spelled out in kdtree_inner_refs.cpp.
#include "scene-packer/kdtree_tree.h"

namespace tessera::pack::kd {

struct InnerRefOptions {
  uint32_t max_refs_per_node = 2;     // 1: Choi et al., 2: Seo et al.
  float tau_occupancy = 0.5f;
  float tau_frequency = 0.4f;
  uint32_t max_path_references = 8;  // over the inner nodes of any root-to-leaf path
};

void add_inner_references(Tree& tree, const Mesh& mesh, const InnerRefOptions& options);

}  // namespace tessera::pack::kd
