#pragma once
// Instanced scenes built in memory for the tests of two-level traversal: objects (meshes, each its
// own kd-tree over its triangles, which lie in one scene-wide triangle list), instances of them, and
// the same geometry flattened into one mesh under one kd-tree (what today's packer writes).
#include <cstdint>
#include <string>
#include <vector>

#include "common/scene/scene_nodes.h"
#include "common/scene/scene_objects.h"
#include "common/scene/top_level_bvh.h"
#include "kernels/accel/instance_traverse.h"

namespace tessera::testing {

struct PlainMesh {
  std::vector<float> positions;     // xyz a vertex
  std::vector<uint32_t> triangles;  // 3 vertex indices a triangle
};

// A mesh from an OBJ/PLY of the shared scenes, positions and triangles only.
PlainMesh load_plain_mesh(const std::string& relative);
// The mesh with every vertex transformed (what a packer does when it flattens an instance).
PlainMesh transformed(const PlainMesh& mesh, const Transform3x4& transform);

// One kd-tree over one mesh, as single-level traversal reads it.
struct FlatScene {
  PlainMesh mesh;
  std::vector<uint32_t> kd_nodes, kd_leaf_refs;
  SceneView view;
};
FlatScene make_flat_scene(PlainMesh mesh);
// The meshes one after another in one mesh (the packer's flattening of identity instances).
PlainMesh concatenated(const std::vector<PlainMesh>& meshes);

struct InstancedScene {
  PlainMesh mesh;  // every object's vertices and triangles, object after object
  std::vector<SceneObject> objects;
  std::vector<uint32_t> object_triangle_base;
  std::vector<uint32_t> kd_nodes, kd_leaf_refs, object_words;
  TopLevelBvh top;
  SceneView view;
  InstanceView instances;

  // Rebuilds the top level for new instances (as a worker does when transforms change).
  void place(const std::vector<Instance>& placed);
};
InstancedScene make_instanced_scene(const std::vector<PlainMesh>& objects, const std::vector<Instance>& instances);

}  // namespace tessera::testing
