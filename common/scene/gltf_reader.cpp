#include "common/scene/gltf_reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <glm/gtc/matrix_inverse.hpp>
#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/quaternion.hpp>
#include <glm/gtc/type_ptr.hpp>
#include <tiny_gltf.h>
#include <unordered_map>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/render/camera_setup.h"
#include "common/scene/glb_container.h"
#include "common/scene/gltf_accessor.h"
#include "common/scene/gltf_material.h"
#include "common/scene/load_warnings.h"

namespace tessera {
namespace {

using namespace tessera::gltf;

// Extensions whose content is read; others in extensionsUsed get a warning, in extensionsRequired an error.
bool supported_extension(const std::string& name) {
  return name == "KHR_lights_punctual" || name == "KHR_materials_emissive_strength" ||
         name == "KHR_materials_transmission" || name == "KHR_materials_ior";
}

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

// URIs may be percent-encoded ("my%20file.bin"); tinygltf 2.7 hands them over undecoded.
std::string percent_decoded(const std::string& path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 2 < path.size() && std::isxdigit(uint8_t(path[i + 1])) && std::isxdigit(uint8_t(path[i + 2]))) {
      out.push_back(char(std::stoi(path.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(path[i]);
    }
  }
  return out;
}

std::string existing_path(const std::string& path) {
  return std::filesystem::exists(path) ? path : percent_decoded(path);
}

// File access for tinygltf: no shell-style expansion of URIs (its default runs wordexp), no writes.
tinygltf::FsCallbacks file_callbacks() {
  tinygltf::FsCallbacks fs{};
  fs.FileExists = [](const std::string& path, void*) { return std::filesystem::is_regular_file(existing_path(path)); };
  fs.ExpandFilePath = [](const std::string& path, void*) { return path; };
  fs.ReadWholeFile = [](std::vector<unsigned char>* out, std::string* err, const std::string& path, void*) {
    try {
      *out = read_file_bytes(existing_path(path));
      return true;
    } catch (const std::exception& e) {
      if (err) *err += e.what();
      return false;
    }
  };
  fs.WriteWholeFile = [](std::string* err, const std::string&, const std::vector<unsigned char>&, void*) {
    if (err) *err += "writing is not allowed";
    return false;
  };
  return fs;
}

// Images stay encoded until a base colour texture needs one (gltf_material.cpp decodes it), so
// normal and occlusion maps cost nothing; with textures off nothing is kept.
bool keep_encoded_image(tinygltf::Image* image, const int, std::string*, std::string*, int, int, const unsigned char* bytes,
                        int size, void* keep) {
  image->as_is = true;
  if (keep && bytes && size > 0) image->image.assign(bytes, bytes + size);
  return true;
}

glm::dmat4 local_matrix(const tinygltf::Node& node, const std::string& label) {
  if (!node.matrix.empty()) {
    if (node.matrix.size() != 16) throw Error(label + ": matrix needs 16 numbers");
    return glm::make_mat4(node.matrix.data());  // column-major, as glTF stores it
  }
  glm::dmat4 m(1.0);
  if (!node.translation.empty()) {
    if (node.translation.size() != 3) throw Error(label + ": translation needs 3 numbers");
    m = glm::translate(m, glm::dvec3(node.translation[0], node.translation[1], node.translation[2]));
  }
  if (!node.rotation.empty()) {
    if (node.rotation.size() != 4) throw Error(label + ": rotation needs 4 numbers");
    glm::dquat q(node.rotation[3], node.rotation[0], node.rotation[1], node.rotation[2]);  // glTF: x, y, z, w
    const double len = glm::length(q);
    if (!(len > 0.0)) throw Error(label + ": zero rotation quaternion");
    m = m * glm::mat4_cast(q / len);
  }
  if (!node.scale.empty()) {
    if (node.scale.size() != 3) throw Error(label + ": scale needs 3 numbers");
    m = glm::scale(m, glm::dvec3(node.scale[0], node.scale[1], node.scale[2]));
  }
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r)
      if (!std::isfinite(m[c][r])) throw Error(label + ": non-finite transform");
  return m;
}

struct MeshInstance {
  int mesh;
  glm::dmat4 world;
  int node;
};

tpk::Vec3 vec3(const glm::dvec3& v) {
  tpk::Vec3 out;
  out.set_x(float(v.x));
  out.set_y(float(v.y));
  out.set_z(float(v.z));
  return out;
}

// One vertex by value: welding equal ones keeps shared corners shared across primitives.
struct VertexKey {
  float v[8];
  bool operator==(const VertexKey& o) const { return std::memcmp(v, o.v, sizeof(v)) == 0; }
};
struct VertexKeyHash {
  size_t operator()(const VertexKey& k) const {
    uint32_t bits[8];
    std::memcpy(bits, k.v, sizeof(bits));
    size_t h = 1469598103934665603ull;
    for (uint32_t b : bits) h = (h ^ b) * 1099511628211ull;
    return h;
  }
};

constexpr int kMaxNodeDepth = 1024;  // deeper chains are no real scene, and would exhaust the stack

class GltfSceneBuilder {
 public:
  GltfSceneBuilder(const tinygltf::Model& model, const MeshLoadOptions& options, LoadWarnings& warnings)
      : model_(model),
        warnings_(warnings),
        materials_(model, options.load_textures, options.max_texture_size, warnings),
        objects_(options.objects) {}

  TriangleMesh build() {
    collect_nodes();
    scan_attributes();
    if (objects_)
      add_objects();
    else
      for (const MeshInstance& instance : instances_) add_mesh(instance);
    finish();
    return std::move(mesh_);
  }

 private:
  void collect_nodes() {
    std::vector<int> roots;
    if (model_.scenes.empty()) {
      std::vector<bool> is_child(model_.nodes.size(), false);
      for (const auto& node : model_.nodes)
        for (int c : node.children)
          if (c >= 0 && size_t(c) < is_child.size()) is_child[size_t(c)] = true;
      for (size_t n = 0; n < model_.nodes.size(); ++n)
        if (!is_child[n]) roots.push_back(int(n));
      if (!roots.empty()) warnings_.add("the file has no scene: every root node is packed");
    } else {
      const int scene = model_.defaultScene >= 0 ? model_.defaultScene : 0;
      if (size_t(scene) >= model_.scenes.size())
        throw Error("default scene " + std::to_string(scene) + " of " + std::to_string(model_.scenes.size()));
      if (model_.scenes.size() > 1)
        warnings_.add("only scene " + std::to_string(scene) + " of " + std::to_string(model_.scenes.size()) + " is packed");
      roots = model_.scenes[size_t(scene)].nodes;
    }
    std::vector<bool> visited(model_.nodes.size(), false);
    for (int root : roots) visit(root, glm::dmat4(1.0), visited, 0);
    if (!model_.animations.empty() && !objects_)
      warnings_.add("animations are packed with --instances only: the scene is packed at rest");
  }

  void visit(int index, const glm::dmat4& parent, std::vector<bool>& visited, int depth) {
    if (depth > kMaxNodeDepth) throw Error("the node hierarchy is deeper than " + std::to_string(kMaxNodeDepth));
    if (index < 0 || size_t(index) >= model_.nodes.size())
      throw Error("node " + std::to_string(index) + " does not exist (" + std::to_string(model_.nodes.size()) + " nodes)");
    if (visited[size_t(index)]) throw Error("node " + std::to_string(index) + " appears twice in the hierarchy (a cycle or two parents)");
    visited[size_t(index)] = true;
    const tinygltf::Node& node = model_.nodes[size_t(index)];
    const std::string label = "node " + std::to_string(index);
    const glm::dmat4 world = parent * local_matrix(node, label);
    if (node.mesh >= 0) {
      if (size_t(node.mesh) >= model_.meshes.size())
        throw Error(label + " names mesh " + std::to_string(node.mesh) + " of " + std::to_string(model_.meshes.size()));
      if (glm::determinant(glm::dmat3(world)) != 0.0) instances_.push_back({node.mesh, world, index});
      else if (objects_) throw Error(label + ": transform has scale 0 (the object would be flat)");
      else warnings_.add("meshes under a zero scale are skipped (they have no area)");
      if (node.skin >= 0) warnings_.add("skins are not supported: skinned meshes are packed in their bind pose");
    } else if (node.mesh < -1) {
      throw Error(label + " names mesh " + std::to_string(node.mesh));
    }
    if (node.camera >= 0) add_camera(node.camera, world, label);
    if (const auto ext = node.extensions.find("KHR_lights_punctual"); ext != node.extensions.end()) {
      if (!ext->second.IsObject() || !ext->second.Has("light") || !ext->second.Get("light").IsInt())
        throw Error(label + ": KHR_lights_punctual without a light index");
      add_light(ext->second.Get("light").GetNumberAsInt(), world, label);
    }
    for (int child : node.children) visit(child, world, visited, depth + 1);
  }

  void add_camera(int index, const glm::dmat4& world, const std::string& label) {
    if (size_t(index) >= model_.cameras.size())
      throw Error(label + " names camera " + std::to_string(index) + " of " + std::to_string(model_.cameras.size()));
    if (mesh_.camera) {
      warnings_.add("the first camera is the default view; later cameras are ignored");
      return;
    }
    const tinygltf::Camera& cam = model_.cameras[size_t(index)];
    const glm::dvec3 eye(world[3]);
    const glm::dvec3 forward = glm::dmat3(world) * glm::dvec3(0, 0, -1), up = glm::dmat3(world) * glm::dvec3(0, 1, 0);
    tpk::Camera camera;
    const Pose pose = look_at({float(eye.x), float(eye.y), float(eye.z)},
                              {float(eye.x + forward.x), float(eye.y + forward.y), float(eye.z + forward.z)},
                              {float(up.x), float(up.y), float(up.z)});
    *camera.mutable_position() = vec3(eye);
    camera.set_qw(pose.orientation[0]);
    camera.set_qx(pose.orientation[1]);
    camera.set_qy(pose.orientation[2]);
    camera.set_qz(pose.orientation[3]);
    if (cam.type == "orthographic") {
      warnings_.add("orthographic cameras are not supported: camera " + std::to_string(index) + " is used with a 60 degree perspective");
      camera.set_vertical_fov_degrees(60.0f);
    } else {
      const double fov = cam.perspective.yfov * 180.0 / M_PI;
      if (!(fov > 0.0 && fov < 180.0)) throw Error("camera " + std::to_string(index) + ": yfov out of range");
      camera.set_vertical_fov_degrees(float(fov));
    }
    mesh_.camera = camera;
  }

  void add_light(int index, const glm::dmat4& world, const std::string& label) {
    if (index < 0 || size_t(index) >= model_.lights.size())
      throw Error(label + " names light " + std::to_string(index) + " of " + std::to_string(model_.lights.size()));
    const tinygltf::Light& light = model_.lights[size_t(index)];
    // glTF's candela (point) and lux (directional) become Tessera's unitless intensity and radiance 1:1.
    glm::dvec3 colour(1.0);
    if (!light.color.empty()) {
      if (light.color.size() != 3) throw Error("light " + std::to_string(index) + ": color needs 3 numbers");
      colour = glm::dvec3(light.color[0], light.color[1], light.color[2]);
    }
    const glm::dvec3 power = colour * light.intensity;
    if (!(power.x >= 0 && power.y >= 0 && power.z >= 0)) throw Error("light " + std::to_string(index) + ": negative or non-finite intensity");
    if (light.range > 0) warnings_.add("light ranges are not supported: lights reach the whole scene");
    if (light.type == "point" || light.type == "spot") {
      if (light.type == "spot") warnings_.add("spot lights are packed as point lights (no cone)");
      tpk::PointLight out;
      *out.mutable_position() = vec3(glm::dvec3(world[3]));
      *out.mutable_intensity() = vec3(power);
      mesh_.point_lights.push_back(out);
    } else if (light.type == "directional") {
      const glm::dvec3 direction = glm::dmat3(world) * glm::dvec3(0, 0, -1);
      if (!(glm::length(direction) > 0)) throw Error(label + ": a directional light with a degenerate transform");
      tpk::DirectionalLight out;
      *out.mutable_direction() = vec3(glm::normalize(direction));
      *out.mutable_radiance() = vec3(power);
      mesh_.directional_lights.push_back(out);
    } else {
      throw Error("light " + std::to_string(index) + ": unknown type '" + light.type + "'");
    }
  }

  static bool triangle_mode(int mode) {
    return mode == -1 || mode == TINYGLTF_MODE_TRIANGLES || mode == TINYGLTF_MODE_TRIANGLE_STRIP || mode == TINYGLTF_MODE_TRIANGLE_FAN;
  }

  // Whether any primitive brings normals (then the others get flat ones) and texture coordinates.
  void scan_attributes() {
    for (const MeshInstance& instance : instances_)
      for (const auto& prim : model_.meshes[size_t(instance.mesh)].primitives) {
        if (!triangle_mode(prim.mode) || !prim.attributes.count("POSITION")) continue;
        any_normals_ |= prim.attributes.count("NORMAL") > 0;
      }
  }

  void add_mesh(const MeshInstance& instance) {
    const tinygltf::Mesh& mesh = model_.meshes[size_t(instance.mesh)];
    const bool flip = glm::determinant(glm::dmat3(instance.world)) < 0.0;
    const glm::dmat3 normal_matrix = glm::inverseTranspose(glm::dmat3(instance.world));
    for (size_t p = 0; p < mesh.primitives.size(); ++p) {
      const tinygltf::Primitive& prim = mesh.primitives[p];
      const std::string what = "mesh " + std::to_string(instance.mesh) + " primitive " + std::to_string(p);
      if (!triangle_mode(prim.mode)) {
        warnings_.add("point and line primitives are not supported (skipped)");
        continue;
      }
      const auto position = prim.attributes.find("POSITION");
      if (position == prim.attributes.end()) {
        warnings_.add("primitives without POSITION are skipped");
        continue;
      }
      if (!prim.targets.empty()) warnings_.add("morph targets are not supported: meshes are packed in their base shape");
      for (const auto& [name, accessor] : prim.attributes)
        if (name.rfind("COLOR_", 0) == 0) warnings_.add("vertex colours are not supported (ignored)");
      const MaterialUse& material = materials_.use(prim.material, mesh_);
      if (material.invisible) continue;

      const std::vector<float> positions = read_floats(model_, position->second, 3, false, what + " POSITION");
      const size_t vertices = positions.size() / 3;
      std::vector<float> normals, texcoords;
      if (const auto n = prim.attributes.find("NORMAL"); n != prim.attributes.end()) {
        normals = read_floats(model_, n->second, 3, false, what + " NORMAL");
        if (normals.size() != positions.size()) throw Error(what + ": NORMAL and POSITION differ in count");
      }
      if (material.texcoord_set >= 0) {
        const std::string name = "TEXCOORD_" + std::to_string(material.texcoord_set);
        if (const auto t = prim.attributes.find(name); t != prim.attributes.end()) {
          texcoords = read_floats(model_, t->second, 2, true, what + " " + name);
          if (texcoords.size() / 2 != vertices) throw Error(what + ": " + name + " and POSITION differ in count");
        } else {
          warnings_.add(what + " has no " + name + " for its texture: the texture shows one texel");
        }
      }
      std::vector<uint32_t> order;
      if (prim.indices >= 0) {
        order = read_indices(model_, prim.indices, what);
        for (size_t i = 0; i < order.size(); ++i)
          if (order[i] >= vertices)
            throw Error(what + ": index " + std::to_string(order[i]) + " at position " + std::to_string(i) + " is out of range (" +
                        std::to_string(vertices) + " vertices)");
      } else {
        order.resize(vertices);
        for (size_t i = 0; i < vertices; ++i) order[i] = uint32_t(i);
      }
      const std::vector<uint32_t> corners = triangle_list(order, prim.mode, what);

      // World-space attributes of the primitive's vertices.
      std::vector<glm::dvec3> world_pos(vertices), world_normal(normals.empty() ? 0 : vertices);
      for (size_t v = 0; v < vertices; ++v) {
        world_pos[v] = glm::dvec3(instance.world * glm::dvec4(positions[3 * v], positions[3 * v + 1], positions[3 * v + 2], 1.0));
        if (!normals.empty()) world_normal[v] = normal_matrix * glm::dvec3(normals[3 * v], normals[3 * v + 1], normals[3 * v + 2]);
      }
      if (material.clamp_to_edge && !texcoords.empty())
        for (float t : texcoords)
          if (t < 0.0f || t > 1.0f) {
            warnings_.add("clamp-to-edge samplers are rendered as repeat where texture coordinates leave [0, 1]");
            break;
          }
      for (size_t t = 0; t + 2 < corners.size(); t += 3) {
        uint32_t c[3] = {corners[t], corners[t + 1], corners[t + 2]};
        if (flip) std::swap(c[1], c[2]);
        const glm::dvec3 face = glm::cross(world_pos[c[1]] - world_pos[c[0]], world_pos[c[2]] - world_pos[c[0]]);
        const double face_len = glm::length(face);
        for (uint32_t v : c) {
          VertexKey key{};
          for (int a = 0; a < 3; ++a) key.v[a] = float(world_pos[v][a]);
          if (any_normals_) {
            glm::dvec3 n = normals.empty() ? face : world_normal[v];
            const double len = glm::length(n);
            n = len > 0 ? n / len : (face_len > 0 ? face / face_len : glm::dvec3(0, 1, 0));
            for (int a = 0; a < 3; ++a) key.v[3 + a] = float(n[a]);
          }
          if (!texcoords.empty()) {
            // glTF's v runs down the image, Tessera's up; mirrored textures were baked at twice the size.
            const float u = texcoords[2 * v] * (material.halve_u ? 0.5f : 1.0f);
            const float vv = texcoords[2 * v + 1] * (material.halve_v ? 0.5f : 1.0f);
            key.v[6] = u;
            key.v[7] = 1.0f - vv;
            any_texcoords_ = true;
          }
          for (float x : key.v)
            if (!std::isfinite(x)) throw Error(what + ": a vertex transforms to a non-finite value");
          auto [it, inserted] = weld_.try_emplace(key, uint32_t(weld_.size()));
          if (inserted) keys_.push_back(key);
          mesh_.triangles.push_back(it->second);
        }
        mesh_.triangle_materials.push_back(material.index);
      }
    }
  }

  // Strips and fans as triangle lists (strip triangles alternate their winding back).
  static std::vector<uint32_t> triangle_list(const std::vector<uint32_t>& order, int mode, const std::string& what) {
    if (mode == -1 || mode == TINYGLTF_MODE_TRIANGLES) {
      if (order.size() % 3 != 0)
        throw Error(what + ": " + std::to_string(order.size()) + " triangle corners is not a multiple of 3");
      return order;
    }
    std::vector<uint32_t> out;
    for (size_t i = 2; i < order.size(); ++i) {
      if (mode == TINYGLTF_MODE_TRIANGLE_FAN) out.insert(out.end(), {order[0], order[i - 1], order[i]});
      else if (i % 2 == 0) out.insert(out.end(), {order[i - 2], order[i - 1], order[i]});
      else out.insert(out.end(), {order[i - 1], order[i - 2], order[i]});
    }
    return out;
  }

  // Vertex arrays from the welded keys.
  // Objects mode: each mesh once, in object space, in the order nodes first place it; every node that
  // places a mesh with triangles an instance of it.
  void add_objects() {
    std::vector<int> object_of_mesh(model_.meshes.size(), -2);  // -2: not added yet, -1: no triangles
    for (const MeshInstance& instance : instances_) {
      int& object = object_of_mesh[size_t(instance.mesh)];
      if (object == -2) {
        const size_t before = mesh_.triangle_materials.size();
        add_mesh({instance.mesh, glm::dmat4(1.0), instance.node});
        const size_t added = mesh_.triangle_materials.size() - before;
        object = added ? int(mesh_.object_first_triangles.size()) : -1;
        if (added) mesh_.object_first_triangles.push_back(uint32_t(before));
      }
      if (object >= 0) mesh_.instances.push_back({uint32_t(instance.node), uint32_t(object)});
    }
  }

  void finish() {
    for (const VertexKey& key : keys_) {
      mesh_.positions.insert(mesh_.positions.end(), key.v, key.v + 3);
      if (any_normals_) mesh_.normals.insert(mesh_.normals.end(), key.v + 3, key.v + 6);
      if (any_texcoords_) mesh_.texcoords.insert(mesh_.texcoords.end(), key.v + 6, key.v + 8);
    }
  }

 private:
  const tinygltf::Model& model_;
  LoadWarnings& warnings_;
  MaterialTable materials_;
  std::vector<MeshInstance> instances_;
  bool objects_ = false;
  bool any_normals_ = false, any_texcoords_ = false;
  std::unordered_map<VertexKey, uint32_t, VertexKeyHash> weld_;
  std::vector<VertexKey> keys_;
  TriangleMesh mesh_;
};

tinygltf::Model parse_model(std::span<const uint8_t> file, const std::string& name, const std::filesystem::path& base,
                            bool keep_images, LoadWarnings& parse_warnings) {
  const bool binary = looks_like_glb(file) || name.ends_with(".glb");
  GlbLayout layout;
  if (binary) layout = check_glb(file, name);
  // tinygltf 2.7 may read up to 8 bytes past a glb's BIN chunk before checking; keep that inside our allocation.
  const size_t size = file.size();
  std::vector<uint8_t> bytes(size + 16, 0);
  std::copy(file.begin(), file.end(), bytes.begin());

  tinygltf::TinyGLTF loader;
  loader.SetFsCallbacks(file_callbacks());
  loader.SetImageLoader(keep_encoded_image, keep_images ? &loader : nullptr);
  tinygltf::Model model;
  std::string err, warn;
  const std::string base_dir = base.empty() ? "." : base.string();
  const bool ok = binary ? loader.LoadBinaryFromMemory(&model, &err, &warn, bytes.data(), unsigned(size), base_dir)
                         : loader.LoadASCIIFromString(&model, &err, &warn, reinterpret_cast<const char*>(bytes.data()),
                                                      unsigned(size), base_dir);
  if (!ok) {
    std::string why = err.empty() ? "cannot parse glTF" : first_line(err);
    // tinygltf says this, quoting the whole URI, when a data URI does not decode to byteLength bytes
    if (why.starts_with("Failed to decode 'uri' : ") && why.ends_with(" in Buffer"))
      why = "a buffer's data URI is not base64 data of its byteLength bytes";
    throw Error(name + ": " + why);
  }
  if (binary)
    for (const auto& buffer : model.buffers)
      if (buffer.uri.empty() && buffer.data.size() > layout.bin_length)
        throw Error(name + ": a buffer of " + std::to_string(buffer.data.size()) + " bytes exceeds the glb BIN chunk of " +
                    std::to_string(layout.bin_length));
  for (const std::string& line : report_lines(warn)) parse_warnings.add("glTF: " + line);  // noticed, but read
  if (model.asset.version.rfind("2.", 0) != 0)
    throw Error(name + ": glTF version '" + model.asset.version + "' (only 2.x is supported)");
  return model;
}

}  // namespace

TriangleMesh read_gltf(const std::filesystem::path& path, const MeshLoadOptions& options) {
  return parse_gltf(read_file_bytes(path), path.string(), path.parent_path(), options);
}

tinygltf::Model read_gltf_model(const std::filesystem::path& path, std::vector<std::string>& warnings) {
  LoadWarnings notices;
  tinygltf::Model model = parse_model(read_file_bytes(path), path.string(), path.parent_path(), false, notices);
  warnings.insert(warnings.end(), notices.lines().begin(), notices.lines().end());
  return model;
}

TriangleMesh parse_gltf(std::span<const uint8_t> bytes, const std::string& name, const std::filesystem::path& base_dir,
                        const MeshLoadOptions& options) {
  LoadWarnings warnings;
  const tinygltf::Model model = parse_model(bytes, name, base_dir, options.load_textures, warnings);
  for (const auto& ext : model.extensionsRequired)
    if (!supported_extension(ext)) throw Error(name + ": requires glTF extension " + ext + ", which is not supported");
  // Material extensions are named by the material table where a material uses them.
  for (const auto& ext : model.extensionsUsed)
    if (!supported_extension(ext) && !ext.starts_with("KHR_materials_"))
      warnings.add("glTF extension " + ext + " is not supported (ignored)");
  GltfSceneBuilder builder(model, options, warnings);
  TriangleMesh mesh;
  try {
    mesh = builder.build();
  } catch (const Error& e) {
    throw Error(name + ": " + e.what());
  }
  mesh.warnings = warnings.lines();
  return mesh;
}

}  // namespace tessera
