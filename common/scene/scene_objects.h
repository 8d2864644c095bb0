#pragma once
// The objects of an instanced scene as kernels see them (kernels/accel/instance_traverse.h): each
// object is a kd-tree in object space over a range of the scene's triangles. The trees lie one after
// another in the scene's node and leaf-reference buffers, and their references are scene triangle
// indices, so every object shares the scene's vertex, triangle and material buffers.
#include <cstdint>
#include <span>
#include <vector>

#include "common/scene/aabb.h"

namespace tessera {

struct SceneObject {
  uint32_t kd_node_base = 0;      // the object's root slot in the traversal's node buffer
  uint32_t kd_leaf_ref_base = 0;  // its first entry in the leaf-reference buffer
  Aabb bounds;                    // object space
};

// TS_OBJECT_WORDS words an object, as kernels read them.
std::vector<uint32_t> object_words(std::span<const SceneObject> objects);

// Adds triangle_base to every triangle reference of one depth-first (.tpk layout) kd-tree built over
// an object's own triangles: single-triangle leaves, the reference slots of inner nodes and the leaf
// list. The tree then names the scene's triangles, as the other objects' trees do.
void offset_kd_triangles(std::span<uint32_t> dfs_nodes, std::span<uint32_t> leaf_refs, uint32_t triangle_base);

}  // namespace tessera
