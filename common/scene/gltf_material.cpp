#include "common/scene/gltf_material.h"

#include <algorithm>
#include <cmath>
#include <tiny_gltf.h>

#include "common/base/error.h"
#include "common/image/png_io.h"
#include "common/scene/texture_loader.h"

namespace tessera::gltf {
namespace {

// Extensions of a material that the rule reads; any other is warned about.
bool handled_material_extension(const std::string& name) {
  return name == "KHR_materials_emissive_strength" || name == "KHR_materials_transmission" || name == "KHR_materials_ior";
}

double extension_number(const tinygltf::ExtensionMap& extensions, const char* extension, const char* key, double fallback) {
  const auto it = extensions.find(extension);
  if (it == extensions.end() || !it->second.IsObject() || !it->second.Has(key)) return fallback;
  const tinygltf::Value& v = it->second.Get(key);
  return v.IsNumber() ? v.GetNumberAsDouble() : fallback;
}

float component(const std::vector<double>& values, size_t i, double fallback) {
  return float(i < values.size() ? values[i] : fallback);
}

tpk::Vec3 vec3(float x, float y, float z) {
  tpk::Vec3 v;
  v.set_x(x);
  v.set_y(y);
  v.set_z(z);
  return v;
}

std::string material_label(const tinygltf::Model& model, int index) {
  const std::string& name = model.materials[size_t(index)].name;
  return "material " + std::to_string(index) + (name.empty() ? "" : " '" + name + "'");
}

// A texture twice as wide (and/or high), the second half mirrored: repeating it at half the
// texture coordinates is the original's MIRRORED_REPEAT.
TextureImage mirrored(const TextureImage& t, bool in_u, bool in_v) {
  TextureImage out;
  out.name = t.name;
  out.has_alpha_mask = t.has_alpha_mask;
  out.width = t.width * (in_u ? 2 : 1);
  out.height = t.height * (in_v ? 2 : 1);
  out.rgba.resize(size_t(out.width) * out.height * 4);
  for (uint32_t y = 0; y < out.height; ++y)
    for (uint32_t x = 0; x < out.width; ++x) {
      const uint32_t sx = x < t.width ? x : 2 * t.width - 1 - x;
      const uint32_t sy = y < t.height ? y : 2 * t.height - 1 - y;
      std::copy_n(&t.rgba[(size_t(sy) * t.width + sx) * 4], 4, &out.rgba[(size_t(y) * out.width + x) * 4]);
    }
  return out;
}

}  // namespace

MaterialTable::MaterialTable(const tinygltf::Model& model, bool load_textures, uint32_t max_texture_size,
                             LoadWarnings& warnings)
    : model_(model), load_textures_(load_textures), max_texture_size_(max_texture_size), warnings_(warnings) {}

const MaterialUse& MaterialTable::use(int index, TriangleMesh& mesh) {
  auto it = converted_.find(index);
  if (it == converted_.end()) it = converted_.emplace(index, convert(index, mesh)).first;
  return it->second;
}

MaterialUse MaterialTable::convert(int index, TriangleMesh& mesh) {
  MaterialUse use;
  use.index = uint32_t(mesh.materials.size());
  tpk::Material m;
  m.set_texture(-1);
  m.set_ior(1.5f);
  if (index < 0) {  // glTF's default material is white; Tessera's OBJ default grey keeps scenes alike
    m.set_name("default");
    m.set_type(tpk::DIFFUSE);
    *m.mutable_diffuse() = vec3(0.8f, 0.8f, 0.8f);
    mesh.materials.push_back(m);
    return use;
  }
  if (size_t(index) >= model_.materials.size())
    throw Error("a primitive names material " + std::to_string(index) + " of " + std::to_string(model_.materials.size()));
  const tinygltf::Material& src = model_.materials[size_t(index)];
  const auto& pbr = src.pbrMetallicRoughness;
  const std::string label = material_label(model_, index);
  m.set_name(src.name.empty() ? "material" + std::to_string(index) : src.name);

  const float base[4] = {component(pbr.baseColorFactor, 0, 1), component(pbr.baseColorFactor, 1, 1),
                         component(pbr.baseColorFactor, 2, 1), component(pbr.baseColorFactor, 3, 1)};
  *m.mutable_diffuse() = vec3(base[0], base[1], base[2]);
  const float strength = float(extension_number(src.extensions, "KHR_materials_emissive_strength", "emissiveStrength", 1.0));
  const float emission[3] = {component(src.emissiveFactor, 0, 0) * strength, component(src.emissiveFactor, 1, 0) * strength,
                             component(src.emissiveFactor, 2, 0) * strength};
  const double transmission = extension_number(src.extensions, "KHR_materials_transmission", "transmissionFactor", 0.0);

  for (const auto& [name, value] : src.extensions)
    if (!handled_material_extension(name)) warnings_.add("material extension " + name + " is not supported (ignored)");
  if (src.normalTexture.index >= 0) warnings_.add("normal maps are not supported (ignored)");
  if (src.occlusionTexture.index >= 0) warnings_.add("occlusion maps are not supported (ignored)");
  if (pbr.metallicRoughnessTexture.index >= 0)
    warnings_.add("metallic-roughness textures are not supported: the factors choose the material type");

  if (emission[0] > 0 || emission[1] > 0 || emission[2] > 0) {
    m.set_type(tpk::EMISSIVE);
    *m.mutable_emission() = vec3(emission[0], emission[1], emission[2]);
    if (src.emissiveTexture.index >= 0) warnings_.add("emissive textures are not supported: " + label + " emits its factor");
    if (pbr.baseColorTexture.index >= 0) warnings_.add(label + " is emissive: its base colour texture is not shown");
  } else if (transmission >= 0.5) {
    m.set_type(tpk::GLASS);
    m.set_ior(float(extension_number(src.extensions, "KHR_materials_ior", "ior", 1.5)));
    if (!(m.ior() >= 1.0f)) m.set_ior(1.5f);
  } else if (pbr.metallicFactor >= 0.9 && pbr.roughnessFactor <= 0.1) {
    m.set_type(tpk::MIRROR);
    if (pbr.baseColorTexture.index >= 0) warnings_.add(label + " is a mirror: its base colour texture is not shown");
  } else {
    m.set_type(tpk::DIFFUSE);
    const bool cut = src.alphaMode == "MASK" || src.alphaMode == "BLEND";
    const float cutoff = src.alphaMode == "MASK" ? float(src.alphaCutoff) : 0.5f;
    if (src.alphaMode == "BLEND") warnings_.add("alpha blending is rendered as a cut-out at alpha 0.5");
    else if (src.alphaMode != "OPAQUE" && src.alphaMode != "MASK")
      throw Error(label + ": unknown alphaMode '" + src.alphaMode + "'");
    if (pbr.baseColorTexture.index >= 0 && load_textures_) {
      m.set_texture(baked_texture(pbr.baseColorTexture.index, cut ? "MASK" : "OPAQUE", cutoff, base[3], use, mesh));
      use.texcoord_set = pbr.baseColorTexture.texCoord;
      if (use.texcoord_set < 0) throw Error(label + ": negative texCoord");
      if (pbr.baseColorTexture.extensions.count("KHR_texture_transform"))
        warnings_.add("KHR_texture_transform is not supported (texture coordinates used untransformed)");
    } else if (cut && base[3] < cutoff) {
      use.invisible = true;  // every texel is cut out
    }
  }
  use.index = uint32_t(mesh.materials.size());
  mesh.materials.push_back(m);
  return use;
}

int MaterialTable::baked_texture(int texture, const std::string& alpha_mode, float cutoff, float alpha_factor,
                                 MaterialUse& use, TriangleMesh& mesh) {
  if (texture < 0 || size_t(texture) >= model_.textures.size())
    throw Error("a material names texture " + std::to_string(texture) + " of " + std::to_string(model_.textures.size()));
  const tinygltf::Texture& tex = model_.textures[size_t(texture)];
  if (tex.source < 0 || size_t(tex.source) >= model_.images.size())
    throw Error("texture " + std::to_string(texture) + " names image " + std::to_string(tex.source) + " of " +
                std::to_string(model_.images.size()));
  int wrap_s = TINYGLTF_TEXTURE_WRAP_REPEAT, wrap_t = TINYGLTF_TEXTURE_WRAP_REPEAT;
  if (tex.sampler >= 0) {
    if (size_t(tex.sampler) >= model_.samplers.size())
      throw Error("texture " + std::to_string(texture) + " names sampler " + std::to_string(tex.sampler) + " of " +
                  std::to_string(model_.samplers.size()));
    const tinygltf::Sampler& sampler = model_.samplers[size_t(tex.sampler)];
    wrap_s = sampler.wrapS;
    wrap_t = sampler.wrapT;
    if (sampler.magFilter == TINYGLTF_TEXTURE_FILTER_NEAREST)
      warnings_.add("nearest-neighbour texture filtering is rendered bilinear");
  }
  for (int wrap : {wrap_s, wrap_t})
    if (wrap != TINYGLTF_TEXTURE_WRAP_REPEAT && wrap != TINYGLTF_TEXTURE_WRAP_MIRRORED_REPEAT &&
        wrap != TINYGLTF_TEXTURE_WRAP_CLAMP_TO_EDGE)
      throw Error("sampler " + std::to_string(tex.sampler) + ": unknown wrap mode " + std::to_string(wrap));
  use.halve_u = wrap_s == TINYGLTF_TEXTURE_WRAP_MIRRORED_REPEAT;
  use.halve_v = wrap_t == TINYGLTF_TEXTURE_WRAP_MIRRORED_REPEAT;
  use.clamp_to_edge = wrap_s == TINYGLTF_TEXTURE_WRAP_CLAMP_TO_EDGE || wrap_t == TINYGLTF_TEXTURE_WRAP_CLAMP_TO_EDGE;

  const bool mask = alpha_mode == "MASK";
  const std::string key = std::to_string(tex.source) + "|" + (mask ? "mask " + std::to_string(cutoff / alpha_factor) : "opaque") +
                          "|" + std::to_string(use.halve_u) + std::to_string(use.halve_v);
  if (const auto it = baked_.find(key); it != baked_.end()) return it->second;

  const tinygltf::Image& image = model_.images[size_t(tex.source)];
  const std::string name = !image.name.empty() ? image.name : !image.uri.empty() && image.uri.rfind("data:", 0) != 0
                                                                  ? image.uri
                                                                  : "image" + std::to_string(tex.source);
  // tinygltf leaves an external image it could not read empty (with a warning) and goes on
  if (image.image.empty() && !image.uri.empty() && image.uri.rfind("data:", 0) != 0)
    throw Error("image " + std::to_string(tex.source) + " '" + image.uri +
                "' cannot be read: no such file beside the glTF file, or it is empty");
  TextureImage t = make_texture(decode_image(image.image, name), name, max_texture_size_);
  bool any_cut = false;
  for (size_t i = 3; i < t.rgba.size(); i += 4) {
    const bool keep = !mask || float(t.rgba[i]) / 255.0f * alpha_factor >= cutoff;
    t.rgba[i] = keep ? 255 : 0;
    any_cut |= !keep;
  }
  t.has_alpha_mask = any_cut;
  if (use.halve_u || use.halve_v) t = mirrored(t, use.halve_u, use.halve_v);
  const int index = int(mesh.textures.size());
  mesh.textures.push_back(std::move(t));
  baked_.emplace(key, index);
  return index;
}

}  // namespace tessera::gltf
