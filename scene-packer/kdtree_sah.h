#pragma once
// SAH kd-tree build in O(N log N) (Wald & Havran 2006): split candidates are the sorted bounds of
// the (clipped) triangles, swept once per node; event lists stay sorted when passed down, so only
// the triangles cut by a split are clipped and re-sorted.
#include <functional>

#include "scene-packer/kdtree_tree.h"

namespace tessera::pack::kd {

// bounds must hold every triangle. threads: at most this many build subtrees at once (0: one a
// core); the tree is the same for any count. progress (may be empty) gets fractions in [0, 1], from
// the building threads one at a time.
Tree build_sah_tree(const Mesh& mesh, const Box& bounds, const SahCosts& costs, uint32_t max_depth, unsigned threads,
                    const std::function<void(double)>& progress);

// Depth limit for n triangles: log-proportional like PBRT's 8 + 1.3 log2 n, capped by kMaxDepthCap.
uint32_t default_max_depth(uint64_t triangle_count);

}  // namespace tessera::pack::kd
