#include "common/scene/mesh_loader.h"

#include <cmath>
#include <map>
#include <sstream>
#include <tiny_obj_loader.h>
#include <unordered_map>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/base/zstd_codec.h"
#include "common/scene/gltf_reader.h"
#include "common/scene/load_warnings.h"
#include "common/scene/obj_validator.h"
#include "common/scene/ply_reader.h"
#include "common/scene/texture_loader.h"

namespace tessera {
namespace {

constexpr size_t kMaxObjTextBytes = size_t(2) << 30;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string read_obj_text(const std::filesystem::path& path) {
  const std::string name = path.string();
  if (!ends_with(name, ".zst")) return read_file_text(path);
  std::vector<uint8_t> raw;
  try {
    // Decoding streams, so a frame that claims more than it holds costs nothing; the cap bounds
    // what a small file of very repetitive text could still expand to.
    raw = zstd_decompress_file(read_file_bytes(path), kMaxObjTextBytes);
  } catch (const Error& e) {
    throw Error(name + ": " + e.what());
  }
  return std::string(raw.begin(), raw.end());
}

tpk::Vec3 vec3(const tinyobj::real_t* v) {
  tpk::Vec3 out;
  out.set_x(float(v[0]));
  out.set_y(float(v[1]));
  out.set_z(float(v[2]));
  return out;
}

tpk::Material default_material() {
  tpk::Material m;
  m.set_name("default");
  m.set_type(tpk::DIFFUSE);
  m.mutable_diffuse()->set_x(0.8f);
  m.mutable_diffuse()->set_y(0.8f);
  m.mutable_diffuse()->set_z(0.8f);
  m.set_texture(-1);
  return m;
}

// MTL -> our material model: illum 3/5 reflect (mirror), illum 4/6/7/9 refract (glass),
// a non-black Ke emits.
tpk::Material convert_material(const tinyobj::material_t& src) {
  tpk::Material m;
  m.set_name(src.name);
  *m.mutable_diffuse() = vec3(src.diffuse);
  *m.mutable_emission() = vec3(src.emission);
  m.set_ior(src.ior > 0 ? float(src.ior) : 1.5f);
  m.set_texture(-1);
  if (src.emission[0] > 0 || src.emission[1] > 0 || src.emission[2] > 0)
    m.set_type(tpk::EMISSIVE);
  else if (src.illum == 3 || src.illum == 5)
    m.set_type(tpk::MIRROR);
  else if (src.illum == 4 || src.illum == 6 || src.illum == 7 || src.illum == 9)
    m.set_type(tpk::GLASS);
  else
    m.set_type(tpk::DIFFUSE);
  return m;
}

// A map_Kd name as written, relative to the MTL's folder. Exporters on Windows write backslashes and
// often absolute paths of the machine they ran on ("C:\\scenes\\tex.png"): where the path does not
// exist here, the file of that name beside the MTL is taken.
std::filesystem::path texture_path(const std::filesystem::path& dir, std::string name, const std::string& material,
                                   const std::string& statement) {
  for (char& c : name)
    if (c == '\\') c = '/';
  const std::filesystem::path written = dir / name;
  if (std::filesystem::exists(written)) return written;
  const std::filesystem::path beside = dir / std::filesystem::path(name).filename();
  if (std::filesystem::exists(beside)) return beside;
  throw Error("material '" + material + "': " + statement + " '" + name + "' not found (nor '" +
              std::filesystem::path(name).filename().string() + "' in '" + (dir.empty() ? std::string(".") : dir.string()) +
              "'); --no-textures packs without textures");
}

void load_material_textures(TriangleMesh& mesh, const std::vector<tinyobj::material_t>& materials,
                            const std::filesystem::path& dir, const MeshLoadOptions& options) {
  std::map<std::string, int> by_key;  // diffuse|mask -> texture index
  for (size_t i = 0; i < materials.size(); ++i) {
    const auto& src = materials[i];
    if (src.diffuse_texname.empty()) continue;
    const std::string key = src.diffuse_texname + "|" + src.alpha_texname;
    auto [it, inserted] = by_key.try_emplace(key, int(mesh.textures.size()));
    if (inserted) {
      TextureImage texture = load_texture(texture_path(dir, src.diffuse_texname, src.name, "map_Kd"), options.max_texture_size);
      if (!src.alpha_texname.empty())
        apply_alpha_mask(texture, load_texture(texture_path(dir, src.alpha_texname, src.name, "map_d"), options.max_texture_size));
      mesh.textures.push_back(std::move(texture));
    }
    mesh.materials[i].set_texture(it->second);
  }
}

}  // namespace

TriangleMesh parse_obj(const std::string& text, const std::string& name, const std::filesystem::path& dir,
                       const MeshLoadOptions& options) {
  validate_obj_text(text, std::filesystem::path(name).filename().string());

  std::istringstream stream(text);
  tinyobj::MaterialFileReader material_reader(dir.empty() ? std::string("./") : dir.string() + "/");
  tinyobj::attrib_t attrib;
  std::vector<tinyobj::shape_t> shapes;
  std::vector<tinyobj::material_t> materials;
  std::string warn, err;
  if (!tinyobj::LoadObj(&attrib, &shapes, &materials, &warn, &err, &stream, &material_reader, true))
    throw Error(name + ": " + (err.empty() ? "cannot parse OBJ" : err.substr(0, err.find('\n'))));
  // A missing MTL is only a warning for tinyobjloader ("Material file [ x ] not found in a path");
  // for us it is an error: the scene would silently render with default materials.
  for (const std::string* report : {&err, &warn}) {
    const size_t missing = report->find("Material file [");
    if (missing != std::string::npos)
      throw Error(name + ": " + report->substr(missing, report->find('\n', missing) - missing));
  }

  TriangleMesh mesh;
  for (const auto& m : materials) mesh.materials.push_back(convert_material(m));
  const uint32_t fallback_material = static_cast<uint32_t>(mesh.materials.size());
  bool fallback_used = false;

  const bool has_normals = !attrib.normals.empty();
  const bool has_texcoords = !attrib.texcoords.empty();
  // One vertex per distinct (position, normal, texcoord) triple.
  struct Key {
    int v, n, t;
    bool operator==(const Key& o) const { return v == o.v && n == o.n && t == o.t; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return (size_t(k.v) * 73856093u) ^ (size_t(k.n) * 19349663u) ^ (size_t(k.t) * 83492791u); }
  };
  std::unordered_map<Key, uint32_t, KeyHash> vertex_of;
  std::vector<uint32_t> missing_normal_vertices;
  for (const auto& shape : shapes) {
    const auto& indices = shape.mesh.indices;
    if (options.objects && !shape.mesh.num_face_vertices.empty()) {  // each group an object, placed where it is
      const uint32_t object = uint32_t(mesh.object_first_triangles.size());
      mesh.object_first_triangles.push_back(uint32_t(mesh.triangle_count()));
      mesh.instances.push_back({object, object});
    }
    for (size_t f = 0; f < shape.mesh.num_face_vertices.size(); ++f) {
      uint32_t corner[3];
      for (int c = 0; c < 3; ++c) {
        const tinyobj::index_t idx = indices[3 * f + c];
        const Key key{idx.vertex_index, has_normals ? idx.normal_index : -1, has_texcoords ? idx.texcoord_index : -1};
        // The reader's indices are checked here, where they are used, whatever validated the text.
        if (key.v < 0 || size_t(key.v) >= attrib.vertices.size() / 3 ||
            (key.n >= 0 && size_t(key.n) >= attrib.normals.size() / 3) ||
            (key.t >= 0 && size_t(key.t) >= attrib.texcoords.size() / 2))
          throw Error(name + ": face " + std::to_string(f + 1) + " of '" + shape.name + "' refers to a vertex, normal or texture coordinate that does not exist");
        auto [it, inserted] = vertex_of.try_emplace(key, uint32_t(mesh.vertex_count()));
        if (inserted) {
          for (int a = 0; a < 3; ++a) mesh.positions.push_back(float(attrib.vertices[3 * key.v + a]));
          if (has_normals) {
            if (key.n >= 0) {
              for (int a = 0; a < 3; ++a) mesh.normals.push_back(float(attrib.normals[3 * key.n + a]));
            } else {
              missing_normal_vertices.push_back(it->second);
              mesh.normals.insert(mesh.normals.end(), {0.0f, 0.0f, 0.0f});
            }
          }
          if (has_texcoords) {
            mesh.texcoords.push_back(key.t >= 0 ? float(attrib.texcoords[2 * key.t]) : 0.0f);
            mesh.texcoords.push_back(key.t >= 0 ? float(attrib.texcoords[2 * key.t + 1]) : 0.0f);
          }
        }
        corner[c] = it->second;
      }
      mesh.triangles.insert(mesh.triangles.end(), corner, corner + 3);
      int material = f < shape.mesh.material_ids.size() ? shape.mesh.material_ids[f] : -1;
      if (material < 0 || material >= int(materials.size())) {
        material = int(fallback_material);
        fallback_used = true;
      }
      mesh.triangle_materials.push_back(uint32_t(material));
    }
  }
  if (fallback_used) mesh.materials.push_back(default_material());
  // What the file holds that the scene will not show, each distinct line once (tinyobjloader says so
  // at every `usemtl` of a material the MTL lacks); the packer prints them.
  LoadWarnings warnings;
  for (const std::string& line : report_lines(warn))
    if (line.find("not found in .mtl") != std::string::npos) warnings.add(line + ": its faces get the default material");
  size_t lines = 0, points = 0;
  for (const auto& shape : shapes) {
    lines += shape.lines.num_line_vertices.size();
    points += shape.points.indices.size();
  }
  if (lines || points)
    warnings.add(std::to_string(lines) + " line and " + std::to_string(points) + " point elements are not drawn (only faces are)");
  mesh.warnings = warnings.lines();

  // Corners that came without a normal get the area-weighted normal of their triangles.
  if (!missing_normal_vertices.empty()) {
    std::vector<float> accumulated(mesh.normals.size(), 0.0f);
    std::vector<bool> missing(mesh.vertex_count(), false);
    for (uint32_t v : missing_normal_vertices) missing[v] = true;
    for (size_t t = 0; t < mesh.triangle_count(); ++t) {
      const uint32_t* tri = &mesh.triangles[3 * t];
      float e1[3], e2[3];
      for (int a = 0; a < 3; ++a) {
        e1[a] = mesh.positions[3 * tri[1] + a] - mesh.positions[3 * tri[0] + a];
        e2[a] = mesh.positions[3 * tri[2] + a] - mesh.positions[3 * tri[0] + a];
      }
      const float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
      for (int c = 0; c < 3; ++c)
        if (missing[tri[c]])
          for (int a = 0; a < 3; ++a) accumulated[3 * tri[c] + a] += n[a];
    }
    for (uint32_t v : missing_normal_vertices) {
      const float* n = &accumulated[3 * v];
      const float len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
      for (int a = 0; a < 3; ++a) mesh.normals[3 * v + a] = len > 0 ? n[a] / len : (a == 1 ? 1.0f : 0.0f);
    }
  }
  // Normalise the given normals: files carry slightly off-unit ones.
  for (size_t v = 0; v < mesh.normals.size() / 3; ++v) {
    float* n = &mesh.normals[3 * v];
    const float len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (len > 0) for (int a = 0; a < 3; ++a) n[a] /= len;
    else n[1] = 1.0f;
  }
  if (options.load_textures) {
    try {
      load_material_textures(mesh, materials, dir, options);
    } catch (const Error& e) {
      throw Error(name + ": " + e.what());
    }
  }
  return mesh;
}

TriangleMesh load_mesh(const std::filesystem::path& path, const MeshLoadOptions& options) {
  if (!std::filesystem::exists(path)) throw Error("cannot open '" + path.string() + "': no such file");
  const std::string name = path.string();
  TriangleMesh mesh;
  if (ends_with(name, ".obj") || ends_with(name, ".obj.zst"))
    mesh = parse_obj(read_obj_text(path), name, path.parent_path(), options);
  else if (ends_with(name, ".ply"))
    mesh = read_ply(path);
  else if (ends_with(name, ".gltf") || ends_with(name, ".glb"))
    mesh = read_gltf(path, options);
  else
    throw Error(name + ": unknown mesh format (expected .obj, .obj.zst, .ply, .gltf or .glb)");
  if (mesh.materials.empty()) {
    mesh.materials.push_back(default_material());
    mesh.triangle_materials.assign(mesh.triangle_count(), 0);
  }
  if (mesh.triangle_count() == 0) throw Error(name + ": the mesh has no triangles");
  return mesh;
}

}  // namespace tessera
