#pragma once
// The kd-tree in host memory, shared by the build passes: SAH build (kdtree_sah.cpp), inner-node
// references (kdtree_inner_refs.cpp), statistics (kdtree_stats.cpp) and the device layout writer
// (kdtree_layout_writer.cpp). Internal to scene-packer.
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace tessera::pack::kd {

// SAH constants (Wald & Havran 2006 notation). K_T : K_I trades memory for speed; on Crytek Sponza
// (Seo variant, KdBuildOptions::traversal_cost): 4.5 : 1 gives 13 bytes of tree a triangle and 27
// triangle tests a primary ray, 3 : 1 18 B and 20 tests, 2.5 : 1 22 B and 15 tests (1.25x the
// primary rays a second of 4.5 : 1 on an H100, 1.1x on a CPU), 2.25 : 1 24 B (another 1.03x),
// 2 : 1 28 B and 8 tests, 1.5 : 1 38 B. Mesh + tree must stay under 43 bytes a triangle on the
// device: the default is the lowest K_T, in steps of 0.25, that keeps Crytek Sponza there (42.9).
// The empty-space bonus (a split with an empty side costs 1 - bonus times as much): 0.1 by default;
// Wald and Havran's 0.2 with K_T 2.5 (42.2 B) traced 4 % more diffuse rays on the H100 and 1 % fewer
// primary ones (docs/ray-traversal.md). Empty leaves cost no device memory (the device layout leaves them out).
struct SahCosts {
  double traversal = 2.25;    // K_T
  double intersection = 1.0;  // K_I
  double empty_bonus = 0.1;
};
// Depth cap: the traversal's stack of 64 far children can never overflow.
inline constexpr uint32_t kMaxDepthCap = 60;

struct Box {
  std::array<float, 3> min{};
  std::array<float, 3> max{};

  double surface_area() const {
    const double dx = double(max[0]) - min[0], dy = double(max[1]) - min[1], dz = double(max[2]) - min[2];
    return 2.0 * (dx * dy + dy * dz + dz * dx);
  }
  Box below(int axis, float split) const {
    Box b = *this;
    b.max[axis] = split;
    return b;
  }
  Box above(int axis, float split) const {
    Box b = *this;
    b.min[axis] = split;
    return b;
  }
};

inline constexpr uint32_t kLeaf = 3;

struct Node {
  uint32_t axis = kLeaf;  // 0..2: inner node splitting that axis; kLeaf: leaf
  float split = 0.0f;
  uint32_t below = 0, above = 0;        // inner: child node indices
  uint32_t first = 0, count = 0;        // leaf: triangles are Tree::leaf_tris[first, first + count)
  uint32_t ref_count = 0;               // inner: triangle references held by the node
  std::array<uint32_t, 2> refs{};

  bool is_leaf() const { return axis == kLeaf; }
};

struct Tree {
  std::vector<Node> nodes;           // root is node 0; unreachable nodes may remain after passes
  std::vector<uint32_t> leaf_tris;   // leaf lists, each sorted ascending
  Box bounds;
  SahCosts costs;  // the constants the tree was built with; later passes judge by the same
};

// The geometry the tree is built over.
struct Mesh {
  std::span<const float> positions;
  std::span<const uint32_t> triangles;

  uint32_t triangle_count() const { return uint32_t(triangles.size() / 3); }
  std::array<float, 3> vertex(uint32_t tri, int corner) const {
    const size_t v = triangles[3 * size_t(tri) + corner];
    return {positions[3 * v], positions[3 * v + 1], positions[3 * v + 2]};
  }
  Box triangle_bounds(uint32_t tri) const {
    Box b;
    b.min = b.max = vertex(tri, 0);
    for (int c = 1; c < 3; ++c) {
      const auto p = vertex(tri, c);
      for (int a = 0; a < 3; ++a) {
        b.min[a] = std::min(b.min[a], p[a]);
        b.max[a] = std::max(b.max[a], p[a]);
      }
    }
    return b;
  }
};

}  // namespace tessera::pack::kd
