#pragma once
// glTF 2.0 scenes: .gltf (JSON with external or data: URI buffers and images) and binary .glb,
// parsed by tinygltf (Debian's libtinygltf-dev). Every index and byte range is checked here again
// (gltf_accessor.h). The default scene's node hierarchy is flattened into one triangle mesh: node
// transforms applied (a negative determinant flips the winding), triangle lists, strips and fans,
// indexed or not; texture coordinates of the set the base colour texture reads (v flipped to
// Tessera's bottom-up convention); normals transformed by the inverse transpose, or flat ones made
// where a primitive has none while others do (glTF's rule). KHR_lights_punctual lights (spot lights
// as point lights) and the first camera come along. Materials: gltf_material.h. Anything the scene
// cannot show as written is one line in TriangleMesh::warnings; a malformed file is a tessera::Error.
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "common/scene/mesh_loader.h"

namespace tinygltf {
class Model;
}

namespace tessera {

TriangleMesh read_gltf(const std::filesystem::path& path, const MeshLoadOptions& options);

// The same for a file's bytes: `name` labels errors (and ".glb" at its end marks binary input
// without the magic), external URIs are resolved against `base_dir`.
TriangleMesh parse_gltf(std::span<const uint8_t> bytes, const std::string& name, const std::filesystem::path& base_dir,
                        const MeshLoadOptions& options);

// The parsed model of a file (images left unread), for readers of its other parts (gltf_animation.h);
// tinygltf's notices are added to `warnings`.
tinygltf::Model read_gltf_model(const std::filesystem::path& path, std::vector<std::string>& warnings);

}  // namespace tessera
