#pragma once
// SAH kd-tree construction (O(N log N), Wald & Havran 2006) in three variants (Seo et al. 2022,
// Table 5): the standard tree, Choi et al.'s tree whose inner nodes may hold one triangle
// reference, and Seo et al.'s with up to two. Output is the device layout of
// kernels/accel/kdtree_layout.h.
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace tessera::pack {

enum class KdVariant { Standard, Choi, Seo };

struct KdBuildOptions {
  KdVariant variant = KdVariant::Seo;
  double traversal_cost = 2.25;  // SAH K_T with K_I = 1: lower gives smaller leaves, more nodes and bytes (kdtree_tree.h)
  double empty_bonus = 0.1;      // SAH discount of a split with an empty side, 0 to 0.9 (kdtree_tree.h)
  float tau_occupancy = 0.5f;  // see kdtree_builder.cpp for the exact meaning
  float tau_frequency = 0.4f;
  uint32_t max_path_references = 8;  // references on inner nodes along any root-to-leaf path
  // Prune the built tree to at most this many bytes a triangle in the compact device layout
  // (scene-packer/kdtree_prune.h: the compact scene-memory profile's tree); 0: no pruning.
  double byte_budget_per_triangle = 0.0;
  unsigned threads = 0;  // at most this many threads build at once (0: one a core); the output is the same bytes for any count
  std::function<void(double fraction)> progress;  // optional; called from the building threads, one at a time
};

struct KdTreeStats {
  uint64_t inner_nodes_without_refs = 0;
  uint64_t inner_nodes_with_refs = 0;
  uint64_t leaves = 0;
  uint64_t empty_leaves = 0;
  uint64_t leaf_references = 0;   // triangle references held by leaves
  uint64_t inner_references = 0;  // triangle references held by inner nodes
  uint32_t max_depth = 0;
  double sah_cost = 0.0;          // expected cost of a random ray, relative to the root box
  uint64_t pruning_merges = 0;    // leaves merged to fit KdBuildOptions::byte_budget_per_triangle
};

struct PackedKdTree {
  std::vector<uint32_t> nodes;      // 2 words per 8-byte slot
  std::vector<uint32_t> leaf_refs;  // triangle indices of leaves holding two or more triangles
  KdTreeStats stats;
};

// positions: xyz per vertex (already quantized/decoded: the tree is built over exactly the
// coordinates the kernels will see); triangles: 3 vertex indices each, none degenerate.
PackedKdTree build_kdtree(std::span<const float> positions, std::span<const uint32_t> triangles,
                          const KdBuildOptions& options);

}  // namespace tessera::pack
