#pragma once
// glTF 2.0 metallic-roughness materials mapped onto Tessera's four material types, and the base
// colour textures baked for them. The rule, first match wins:
//   1. emissiveFactor x KHR_materials_emissive_strength has a channel > 0   -> EMISSIVE
//   2. KHR_materials_transmission transmissionFactor >= 0.5                 -> GLASS (KHR_materials_ior, else 1.5)
//   3. metallicFactor >= 0.9 and roughnessFactor <= 0.1                     -> MIRROR tinted by the base colour
//   4. otherwise                                                            -> DIFFUSE: base colour factor x texture
// Alpha: OPAQUE ignores alpha; MASK cuts out texels whose alpha x factor is below alphaCutoff
// (baked into the texture as 0 or 255); BLEND is rendered as MASK at 0.5, with a warning.
// Sampler wrap: REPEAT as the kernels do; MIRRORED_REPEAT baked as a texture mirrored to twice its
// size with the texture coordinates halved; CLAMP_TO_EDGE is exact while the coordinates stay in
// [0, 1] and warned about otherwise. What the rule leaves out (normal, occlusion and
// metallic-roughness textures, texture transforms, other material extensions) is warned about.
#include <map>
#include <string>

#include "common/scene/load_warnings.h"
#include "common/scene/triangle_mesh.h"

namespace tinygltf {
class Model;
}

namespace tessera::gltf {

// What the geometry of a primitive needs from its material.
struct MaterialUse {
  uint32_t index = 0;           // into TriangleMesh::materials
  int texcoord_set = -1;        // TEXCOORD_n the base colour texture reads; -1: no texture
  bool halve_u = false;         // the texture was baked mirrored in u (MIRRORED_REPEAT): u / 2
  bool halve_v = false;         // ... in v
  bool clamp_to_edge = false;   // the sampler clamps (the kernels repeat)
  bool invisible = false;       // alpha factor below the cutoff and no texture: nothing to draw
};

class MaterialTable {
 public:
  MaterialTable(const tinygltf::Model& model, bool load_textures, uint32_t max_texture_size, LoadWarnings& warnings);
  // glTF material `index` (-1: the default material), converted and added to `mesh` on first use.
  // Throws Error for a material or texture index out of range or an image that does not decode.
  const MaterialUse& use(int index, TriangleMesh& mesh);

 private:
  MaterialUse convert(int index, TriangleMesh& mesh);
  int baked_texture(int texture, const std::string& alpha_mode, float cutoff, float alpha_factor, MaterialUse& use,
                    TriangleMesh& mesh);

  const tinygltf::Model& model_;
  bool load_textures_;
  uint32_t max_texture_size_;
  LoadWarnings& warnings_;
  std::map<int, MaterialUse> converted_;
  std::map<std::string, int> baked_;  // image and baking choices -> index into TriangleMesh::textures
};

}  // namespace tessera::gltf
