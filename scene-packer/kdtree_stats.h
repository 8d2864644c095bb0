#pragma once
// Node counts, depth and SAH cost of a finished host tree (Seo et al. 2022, Table 5b).
#include "scene-packer/kdtree_builder.h"
#include "scene-packer/kdtree_tree.h"

namespace tessera::pack::kd {

KdTreeStats tree_stats(const Tree& tree);

}  // namespace tessera::pack::kd
