#pragma once
// Instanced scenes in tessera-pack (docs/instances.md): a glTF's meshes as objects, each its own
// kd-tree in object space, its nodes as instances, its node hierarchy and animations stored as they
// are; or an OBJ's groups as objects under identity instances (--keep-obj-groups). The sections
// written here are SCENE_OBJECTS, SCENE_INSTANCES and SCENE_NODES with one tree an object in
// KD_NODES / KD_LEAF_REFS (proto/tpk.proto).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/scene/aabb.h"
#include "common/scene/gltf_animation.h"
#include "common/scene/triangle_mesh.h"
#include "scene-packer/kdtree_builder.h"
#include "scene-packer/quantizer.h"

namespace tessera::pack {

// The node hierarchy and animations the objects of `mesh` hang in: the glTF file's, or one identity
// root node an object for other inputs. Refuses (Error naming the file) an animation that scales a
// node to 0 at a key, besides what read_gltf_animations refuses (non-finite or non-increasing key
// times, non-finite values, ...).
anim::AnimatedScene object_nodes(const std::filesystem::path& input, const TriangleMesh& mesh);

// Whether a scene loaded with objects is worth packing instanced: more than one instance, or
// animations. A single static object packs flattened, exactly as a scene without objects.
bool worth_instancing(const TriangleMesh& mesh, const anim::AnimatedScene& nodes);

struct PackedObjects {
  std::vector<uint32_t> kd_nodes, kd_leaf_refs;  // one tree an object, back to back
  std::vector<uint32_t> object_words;            // SCENE_OBJECTS
  std::vector<uint32_t> instance_words;          // SCENE_INSTANCES
  std::vector<uint8_t> scene_nodes;              // SCENE_NODES
  KdTreeStats stats;  // the trees' counts summed, the deepest depth, the SAH costs summed
  Aabb world_bounds;  // every instance at time 0
};

// Builds each object's tree over the quantized mesh and checks the instances (count, nesting,
// transforms at time 0: Error "<name>: instance N: transform has scale 0 ...").
PackedObjects pack_objects(const QuantizedMesh& q, const std::vector<InstanceSource>& instances,
                           const anim::AnimatedScene& nodes, const KdBuildOptions& options, const std::string& name);

}  // namespace tessera::pack
