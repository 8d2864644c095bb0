// kd-tree build: SAH tree (kdtree_sah.cpp), optional inner-node references (kdtree_inner_refs.cpp),
// statistics (kdtree_stats.cpp) and the device layout (kdtree_layout_writer.cpp).
//
// Variants and our definition of the inner-reference heuristic:
//   Standard  the SAH tree as built (Wald & Havran 2006, perfect splits, empty-space bonus).
//   Choi      inner nodes may hold ONE triangle reference (Choi et al. 2013).
//   Seo       inner nodes may hold TWO (Seo et al. 2017).
// For Choi and Seo the SAH tree is walked top-down. At inner node n (box B, split axis k) the
// candidates are the triangles in both subtrees of n, i.e. those straddling n's split plane:
//   occupancy(t, n) = area of (bbox(t) clipped to B) projected onto the split plane
//                     / area of B's cross-section in that plane                 (0 if that is 0)
//   frequency(t, n) = leaves of subtree(n) holding t / leaves of subtree(n)      (empty leaves count)
// A candidate with occupancy >= tau_occupancy and frequency >= tau_frequency may move into n, most
// frequent first (ties: lower triangle index), at most 1 (Choi) or 2 (Seo) a node and at most
// max_path_references in total over the inner nodes of any root-to-leaf path; it is removed from
// every leaf below n (the traversal tests it whenever it visits n). It moves only if that saves
// memory: the leaf-reference bytes it frees (4 per list of 3+ it leaves, 8 per list of 2, which
// becomes an inline single) must exceed what it costs: 8 bytes (the node's extra slot) for a
// node's first reference, nothing for the second. Otherwise Choi trees can outgrow standard
// ones with our memory-first SAH constants. Then, bottom-up, a subtree
// becomes a single leaf holding all triangles of its leaves and inner nodes when the SAH says that
// leaf is not more expensive than the subtree:
//   C(leaf) = K_I * triangles
//   C(inner) = lambda * (K_T + P_below * C(below) + P_above * C(above)) + K_I * references,
//   lambda = 1 - empty bonus when a child is an empty leaf (the build's own rule).
// Empty subtrees collapse into one empty leaf. Without moves nothing would collapse, since the
// greedy build only split where splitting was cheaper. The byte estimate above cannot see that
// the layout writer already shares references between neighbouring leaves, so as a last guard a
// Choi tree is also written without references and a Seo tree also as Choi and standard trees, and
// the smallest result is kept (ties go to the requested variant): Seo <= Choi <= standard in bytes
// always holds. Every choice is ordered by counts and triangle indices, so the output is
// deterministic.
#include "scene-packer/kdtree_builder.h"

#include <cmath>
#include <future>
#include <string>

#include "common/base/error.h"
#include "scene-packer/kdtree_inner_refs.h"
#include "scene-packer/kdtree_layout_writer.h"
#include "scene-packer/kdtree_prune.h"
#include "scene-packer/kdtree_sah.h"
#include "scene-packer/kdtree_stats.h"

namespace tessera::pack {
namespace {

kd::Box mesh_bounds(const kd::Mesh& mesh) {
  kd::Box b;
  if (mesh.triangle_count() == 0) return b;
  b = mesh.triangle_bounds(0);
  for (uint32_t t = 1; t < mesh.triangle_count(); ++t) {
    const kd::Box tb = mesh.triangle_bounds(t);
    for (int a = 0; a < 3; ++a) {
      b.min[a] = std::min(b.min[a], tb.min[a]);
      b.max[a] = std::max(b.max[a], tb.max[a]);
    }
  }
  return b;
}

void validate(std::span<const float> positions, std::span<const uint32_t> triangles) {
  if (positions.size() % 3 != 0 || triangles.size() % 3 != 0)
    throw Error("kd-tree build: positions and triangles must come in triples");
  if (triangles.size() / 3 >= (size_t(1) << 30)) throw Error("kd-tree build: more than 2^30 triangles");
  const size_t vertices = positions.size() / 3;
  for (uint32_t v : triangles)
    if (v >= vertices) throw Error("kd-tree build: vertex index " + std::to_string(v) + " out of range");
  for (float x : positions)
    if (!std::isfinite(x)) throw Error("kd-tree build: non-finite vertex coordinate");
}

size_t packed_bytes(const PackedKdTree& t) { return sizeof(uint32_t) * (t.nodes.size() + t.leaf_refs.size()); }

}  // namespace

PackedKdTree build_kdtree(std::span<const float> positions, std::span<const uint32_t> triangles,
                          const KdBuildOptions& options) {
  validate(positions, triangles);
  const kd::Mesh mesh{positions, triangles};
  // Progress: the SAH build is by far the longest part.
  const double build_share = options.variant == KdVariant::Standard ? 0.95 : 0.85;
  std::function<void(double)> build_progress;
  if (options.progress) build_progress = [&](double f) { options.progress(f * build_share); };

  kd::SahCosts costs;
  costs.traversal = options.traversal_cost;
  costs.empty_bonus = options.empty_bonus;
  const kd::Tree tree = kd::build_sah_tree(mesh, mesh_bounds(mesh), costs, kd::default_max_depth(mesh.triangle_count()),
                                           options.threads, build_progress);
  // each variant pruned to the byte budget (where there is one) before it is laid out
  kd::PruneOptions prune;
  prune.bytes_per_triangle = options.byte_budget_per_triangle;
  auto lay_out = [](const kd::Tree& t, size_t merges) {
    PackedKdTree out;
    kd::write_layout(t, &out);
    out.stats = kd::tree_stats(t);
    out.stats.pruning_merges = merges;
    return out;
  };
  auto pack = [&](kd::Tree& t) { return lay_out(t, kd::prune_to_budget(t, mesh, prune)); };
  // The variants with inner references (one and two a node) are built at once, the plain tree's
  // layout beside them; the smallest wins, in the fixed order below.
  const uint32_t max_refs = options.variant == KdVariant::Seo ? 2 : options.variant == KdVariant::Choi ? 1 : 0;
  std::vector<std::future<PackedKdTree>> with_refs;
  for (uint32_t refs_per_node = 1; refs_per_node <= max_refs; ++refs_per_node)
    with_refs.push_back(std::async(std::launch::async, [&, refs_per_node] {
      kd::Tree with_refs_tree = tree;
      kd::InnerRefOptions refs;
      refs.max_refs_per_node = refs_per_node;
      refs.tau_occupancy = options.tau_occupancy;
      refs.tau_frequency = options.tau_frequency;
      refs.max_path_references = options.max_path_references;
      kd::add_inner_references(with_refs_tree, mesh, refs);
      return pack(with_refs_tree);
    }));
  PackedKdTree best;
  if (prune.bytes_per_triangle > 0.0) {
    kd::Tree plain = tree;
    best = pack(plain);
  } else {
    best = lay_out(tree, 0);
  }
  for (auto& candidate_future : with_refs) {
    PackedKdTree candidate = candidate_future.get();
    if (packed_bytes(candidate) <= packed_bytes(best)) best = std::move(candidate);
  }
  if (options.progress) options.progress(1.0);
  return best;
}

}  // namespace tessera::pack
