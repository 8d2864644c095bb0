#pragma once
// Loads a triangle mesh with its materials and textures: Wavefront OBJ (+ MTL, also
// zstd-compressed as .obj.zst), PLY (ASCII or binary little endian) and glTF 2.0 (.gltf, .glb;
// gltf_reader.h). Malformed input is a tessera::Error naming the file and line; nothing is
// silently skipped.
#include <filesystem>

#include "common/scene/triangle_mesh.h"

namespace tessera {

struct MeshLoadOptions {
  bool load_textures = true;
  uint32_t max_texture_size = 1024;  // larger textures are halved until they fit
  // Keep objects apart (TriangleMesh::object_first_triangles, instances): a glTF's meshes once each
  // in object space with the nodes that place them, an OBJ's groups (g) as objects under identity
  // instances. Off: one flattened mesh in world space.
  bool objects = false;
};

TriangleMesh load_mesh(const std::filesystem::path& path, const MeshLoadOptions& options = {});

// OBJ text already in memory: `name` names it in errors; material libraries and textures are
// looked up in `dir`.
TriangleMesh parse_obj(const std::string& text, const std::string& name, const std::filesystem::path& dir,
                       const MeshLoadOptions& options = {});

}  // namespace tessera
