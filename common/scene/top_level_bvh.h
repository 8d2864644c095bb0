#pragma once
// The top level of two-level traversal (kernels/accel/instance_traverse.h): a BVH over the world
// boxes of a scene's instances, with each instance's world-to-object transform, in the words kernels
// read. The worker builds it at load and again whenever a transform changes (an animation step, a
// frame request's instance transforms): median splits on the longest centroid axis, two instances
// a leaf, well under a millisecond for a thousand instances (`tessera-bench instances`).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/scene/aabb.h"
#include "common/scene/scene_nodes.h"

namespace tessera {

struct TopLevelBvh {
  std::vector<uint32_t> nodes;      // TS_TLAS_NODE_WORDS a node, the root first
  std::vector<uint32_t> instances;  // TS_INSTANCE_WORDS an instance, in the order leaves name them
  uint32_t instance_count = 0;
  uint32_t depth = 0;               // levels, the root's included
  Aabb bounds;                      // world box of every instance

  uint64_t device_bytes() const { return 4 * (uint64_t(nodes.size()) + instances.size()); }
};

// A world box holding an object-space box under a transform (its eight corners transformed).
Aabb transformed_bounds(const Aabb& box, const Transform3x4& transform);

// Builds the top level over instances of objects whose object-space boxes are object_bounds.
// Throws Error("<name>: ...") for more instances than kMaxInstances, an object index out of range, or
// a transform that has no inverse (scale 0, NaN).
TopLevelBvh build_top_level(std::span<const Instance> instances, std::span<const Aabb> object_bounds,
                            const std::string& name);

}  // namespace tessera
