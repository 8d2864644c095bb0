#include "scene-packer/compose.h"

#include <cmath>
#include <map>
#include <utility>

#include "common/base/error.h"
#include "common/scene/aabb.h"

namespace tessera::pack {
namespace {

using Vec3 = std::array<float, 3>;

Vec3 to_vec(const tpk::Vec3& v) { return {v.x(), v.y(), v.z()}; }
Vec3 sub(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
float length(const Vec3& v) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

// Gives `part` flat normals: one vertex per triangle corner, each with its face normal.
void flatten_normals(TriangleMesh& part) {
  TriangleMesh flat;
  flat.materials = std::move(part.materials);
  flat.textures = std::move(part.textures);
  flat.triangle_materials = std::move(part.triangle_materials);
  const bool uv = part.has_texcoords();
  for (size_t t = 0; t < part.triangle_count(); ++t) {
    const uint32_t* idx = &part.triangles[3 * t];
    const Vec3 p0 = part.position(idx[0]), p1 = part.position(idx[1]), p2 = part.position(idx[2]);
    Vec3 n = cross(sub(p1, p0), sub(p2, p0));
    const float len = length(n);
    n = len > 0 ? Vec3{n[0] / len, n[1] / len, n[2] / len} : Vec3{0, 1, 0};
    for (int c = 0; c < 3; ++c) {
      flat.triangles.push_back(uint32_t(flat.vertex_count()));
      for (int a = 0; a < 3; ++a) flat.positions.push_back(part.positions[3 * idx[c] + a]);
      for (int a = 0; a < 3; ++a) flat.normals.push_back(n[a]);
      if (uv)
        for (int a = 0; a < 2; ++a) flat.texcoords.push_back(part.texcoords[2 * idx[c] + a]);
    }
  }
  part = std::move(flat);
}

// Appends `part`'s vertices and triangles (its materials are already mapped to `mesh`'s).
void append_geometry(TriangleMesh& mesh, const TriangleMesh& part) {
  const uint32_t base = uint32_t(mesh.vertex_count());
  mesh.positions.insert(mesh.positions.end(), part.positions.begin(), part.positions.end());
  mesh.normals.insert(mesh.normals.end(), part.normals.begin(), part.normals.end());
  mesh.texcoords.insert(mesh.texcoords.end(), part.texcoords.begin(), part.texcoords.end());
  for (uint32_t i : part.triangles) mesh.triangles.push_back(base + i);
  mesh.triangle_materials.insert(mesh.triangle_materials.end(), part.triangle_materials.begin(),
                                 part.triangle_materials.end());
}

// Brings normals and texcoords of `mesh` and `part` to the same layout before appending.
void harmonize(TriangleMesh& mesh, TriangleMesh& part) {
  const bool normals = mesh.has_normals() || part.has_normals();
  if (normals && !part.has_normals()) flatten_normals(part);
  if (normals && !mesh.has_normals() && mesh.triangle_count() > 0) flatten_normals(mesh);
  const bool uv = mesh.has_texcoords() || part.has_texcoords();
  if (uv && !part.has_texcoords()) part.texcoords.assign(2 * part.vertex_count(), 0.0f);
  if (uv && !mesh.has_texcoords()) mesh.texcoords.assign(2 * mesh.vertex_count(), 0.0f);
}

uint32_t material_index(const TriangleMesh& mesh, const std::string& name, const std::string& what) {
  if (name.empty()) throw Error("scene settings: " + what + " needs a material");
  for (size_t i = 0; i < mesh.materials.size(); ++i)
    if (mesh.materials[i].name() == name) return uint32_t(i);
  throw Error("scene settings: " + what + ": no material named '" + name + "' (declare it in add_materials)");
}

void add_part(TriangleMesh& mesh, TriangleMesh part, uint32_t material) {
  part.triangle_materials.assign(part.triangle_count(), material);
  harmonize(mesh, part);
  append_geometry(mesh, part);
}

tpk::Material new_material(const settings::MaterialOverride& o) {
  tpk::Material m;
  m.set_name(o.name());
  m.set_type(o.has_type() ? o.type() : tpk::DIFFUSE);
  if (o.has_diffuse()) {
    *m.mutable_diffuse() = o.diffuse();
  } else {
    m.mutable_diffuse()->set_x(0.8f);
    m.mutable_diffuse()->set_y(0.8f);
    m.mutable_diffuse()->set_z(0.8f);
  }
  if (o.has_emission()) *m.mutable_emission() = o.emission();
  m.set_ior(o.has_ior() ? o.ior() : 1.5f);
  m.set_texture(-1);
  return m;
}

TriangleMesh transformed_include(const settings::MeshInclude& inc, const ComposeOptions& options) {
  TriangleMesh part = load_mesh(resolve_include(inc.path(), options), options.load);
  Aabb box;
  for (size_t v = 0; v < part.vertex_count(); ++v) box.extend(part.position(uint32_t(v)));
  Vec3 pivot{0, 0, 0};
  float scale = inc.has_scale() ? inc.scale() : 1.0f;
  if (inc.fit_size() > 0.0f) {
    const float extent = std::max({box.extent(0), box.extent(1), box.extent(2)});
    if (!(extent > 0.0f)) throw Error("scene settings: include '" + inc.path() + "': the mesh has no extent to fit");
    pivot = {0.5f * (box.min[0] + box.max[0]), box.min[1], 0.5f * (box.min[2] + box.max[2])};
    scale = inc.fit_size() / extent;
  }
  if (!(scale > 0.0f)) throw Error("scene settings: include '" + inc.path() + "': scale must be positive");
  const double angle = double(inc.rotate_y_degrees()) * M_PI / 180.0;
  const float c = float(std::cos(angle)), s = float(std::sin(angle));
  const Vec3 t = to_vec(inc.translate());
  for (size_t v = 0; v < part.vertex_count(); ++v) {
    float* p = &part.positions[3 * v];
    const float x = (p[0] - pivot[0]) * scale, y = (p[1] - pivot[1]) * scale, z = (p[2] - pivot[2]) * scale;
    p[0] = c * x + s * z + t[0];
    p[1] = y + t[1];
    p[2] = -s * x + c * z + t[2];
    if (part.has_normals()) {
      float* n = &part.normals[3 * v];
      const float nx = n[0], nz = n[2];
      n[0] = c * nx + s * nz;
      n[2] = -s * nx + c * nz;
    }
  }
  return part;
}

void append_include(TriangleMesh& mesh, const settings::MeshInclude& inc, const ComposeOptions& options) {
  TriangleMesh part = transformed_include(inc, options);
  for (const auto& line : part.warnings) mesh.warnings.push_back(inc.path() + ": " + line);
  if (!part.point_lights.empty() || !part.directional_lights.empty() || part.camera)
    mesh.warnings.push_back(inc.path() + ": lights and cameras of included files are not used (give them in the settings)");
  if (!inc.material().empty()) {
    add_part(mesh, std::move(part), material_index(mesh, inc.material(), "include '" + inc.path() + "'"));
    return;
  }
  // Keep the mesh's own materials and textures, appended after the scene's.
  const uint32_t material_base = uint32_t(mesh.materials.size());
  const int texture_base = int(mesh.textures.size());
  for (auto m : part.materials) {
    if (m.texture() >= 0) m.set_texture(m.texture() + texture_base);
    mesh.materials.push_back(std::move(m));
  }
  for (auto& texture : part.textures) mesh.textures.push_back(std::move(texture));
  for (uint32_t& m : part.triangle_materials) m += material_base;
  part.materials.clear();
  part.textures.clear();
  harmonize(mesh, part);
  append_geometry(mesh, part);
}

TriangleMesh make_box(const Vec3& lo, const Vec3& hi) {
  TriangleMesh box;
  // Each face: 4 corners in counter-clockwise order seen from outside.
  const Vec3 corners[6][4] = {
      {{hi[0], lo[1], lo[2]}, {hi[0], hi[1], lo[2]}, {hi[0], hi[1], hi[2]}, {hi[0], lo[1], hi[2]}},  // +x
      {{lo[0], lo[1], lo[2]}, {lo[0], lo[1], hi[2]}, {lo[0], hi[1], hi[2]}, {lo[0], hi[1], lo[2]}},  // -x
      {{lo[0], hi[1], lo[2]}, {lo[0], hi[1], hi[2]}, {hi[0], hi[1], hi[2]}, {hi[0], hi[1], lo[2]}},  // +y
      {{lo[0], lo[1], lo[2]}, {hi[0], lo[1], lo[2]}, {hi[0], lo[1], hi[2]}, {lo[0], lo[1], hi[2]}},  // -y
      {{lo[0], lo[1], hi[2]}, {hi[0], lo[1], hi[2]}, {hi[0], hi[1], hi[2]}, {lo[0], hi[1], hi[2]}},  // +z
      {{lo[0], lo[1], lo[2]}, {lo[0], hi[1], lo[2]}, {hi[0], hi[1], lo[2]}, {hi[0], lo[1], lo[2]}},  // -z
  };
  for (const auto& face : corners) {
    const uint32_t base = uint32_t(box.vertex_count());
    for (const auto& p : face) box.positions.insert(box.positions.end(), p.begin(), p.end());
    for (uint32_t i : {0u, 1u, 2u, 0u, 2u, 3u}) box.triangles.push_back(base + i);
  }
  return box;
}

}  // namespace

bool has_composition(const settings::SceneSettings& s) {
  return s.add_materials_size() > 0 || s.include_size() > 0 || s.sphere_size() > 0 || s.box_size() > 0 ||
         s.quad_size() > 0;
}

std::filesystem::path resolve_include(const std::string& path, const ComposeOptions& options) {
  if (path.empty()) throw Error("scene settings: include needs a path");
  const std::filesystem::path p(path);
  if (p.is_absolute()) {
    if (std::filesystem::exists(p)) return p;
    throw Error("scene settings: include '" + path + "' does not exist");
  }
  std::string tried;
  std::vector<std::filesystem::path> dirs{options.settings_dir};
  dirs.insert(dirs.end(), options.include_dirs.begin(), options.include_dirs.end());
  for (const auto& dir : dirs) {
    const auto candidate = dir / p;
    if (std::filesystem::exists(candidate)) return candidate;
    tried += (tried.empty() ? "" : ", ") + (dir.empty() ? std::string(".") : dir.string());
  }
  throw Error("scene settings: include '" + path + "' not found (looked in " + tried + "; add --include-dir)");
}

TriangleMesh make_icosphere(uint32_t subdivisions) {
  if (subdivisions > 6) throw Error("sphere subdivisions must be 0..6");
  const float t = (1.0f + std::sqrt(5.0f)) / 2.0f;
  std::vector<Vec3> v = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
                         {0, -1, -t}, {0, 1, -t}, {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
  std::vector<uint32_t> f = {0, 11, 5, 0, 5,  1,  0,  1, 7, 0, 7,  10, 0, 10, 11, 1, 5, 9, 5, 11,
                             4, 11, 10, 2, 10, 7, 6, 7, 1, 8, 3, 9, 4, 3, 4, 2, 3, 2, 6, 3,
                             6, 8, 3, 8, 9, 4, 9, 5, 2, 4, 11, 6, 2, 10, 8, 6, 7, 9, 8, 1};
  auto normalize = [](Vec3 p) {
    const float len = length(p);
    return Vec3{p[0] / len, p[1] / len, p[2] / len};
  };
  for (auto& p : v) p = normalize(p);
  for (uint32_t level = 0; level < subdivisions; ++level) {
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> midpoints;
    auto midpoint = [&](uint32_t a, uint32_t b) {
      const auto key = std::minmax(a, b);
      const auto it = midpoints.find(key);
      if (it != midpoints.end()) return it->second;
      v.push_back(normalize({0.5f * (v[a][0] + v[b][0]), 0.5f * (v[a][1] + v[b][1]), 0.5f * (v[a][2] + v[b][2])}));
      return midpoints[key] = uint32_t(v.size() - 1);
    };
    std::vector<uint32_t> next;
    next.reserve(f.size() * 4);
    for (size_t i = 0; i < f.size(); i += 3) {
      const uint32_t a = f[i], b = f[i + 1], c = f[i + 2];
      const uint32_t ab = midpoint(a, b), bc = midpoint(b, c), ca = midpoint(c, a);
      next.insert(next.end(), {a, ab, ca, b, bc, ab, c, ca, bc, ab, bc, ca});
    }
    f = std::move(next);
  }
  TriangleMesh sphere;
  for (const auto& p : v) {
    sphere.positions.insert(sphere.positions.end(), p.begin(), p.end());
    sphere.normals.insert(sphere.normals.end(), p.begin(), p.end());
  }
  sphere.triangles = std::move(f);
  return sphere;
}

void compose_scene(const settings::SceneSettings& s, const ComposeOptions& options, TriangleMesh& mesh) {
  for (const auto& o : s.add_materials()) {
    if (o.name().empty() || o.name() == "*") throw Error("scene settings: add_materials needs a name");
    for (const auto& m : mesh.materials)
      if (m.name() == o.name())
        throw Error("scene settings: add_materials: '" + o.name() + "' already exists (use materials to override it)");
    mesh.materials.push_back(new_material(o));
  }
  for (const auto& inc : s.include()) append_include(mesh, inc, options);
  int index = 0;
  for (const auto& sp : s.sphere()) {
    const std::string what = "sphere " + std::to_string(++index);
    if (!(sp.radius() > 0.0f)) throw Error("scene settings: " + what + ": radius must be positive");
    if (sp.subdivisions() > 6) throw Error("scene settings: " + what + ": subdivisions must be at most 6");
    TriangleMesh part = make_icosphere(sp.subdivisions() == 0 ? 3 : sp.subdivisions());
    const Vec3 c = to_vec(sp.center());
    for (size_t i = 0; i < part.positions.size(); ++i) part.positions[i] = part.positions[i] * sp.radius() + c[i % 3];
    add_part(mesh, std::move(part), material_index(mesh, sp.material(), what));
  }
  index = 0;
  for (const auto& b : s.box()) {
    const std::string what = "box " + std::to_string(++index);
    const Vec3 lo = to_vec(b.min()), hi = to_vec(b.max());
    if (!(lo[0] < hi[0] && lo[1] < hi[1] && lo[2] < hi[2]))
      throw Error("scene settings: " + what + ": min must be below max on every axis");
    add_part(mesh, make_box(lo, hi), material_index(mesh, b.material(), what));
  }
  index = 0;
  for (const auto& q : s.quad()) {
    const std::string what = "quad " + std::to_string(++index);
    const Vec3 a = to_vec(q.a()), b = to_vec(q.b()), c = to_vec(q.c()), d = to_vec(q.d());
    if (!(length(cross(sub(b, a), sub(c, a))) > 0.0f) || !(length(cross(sub(c, a), sub(d, a))) > 0.0f))
      throw Error("scene settings: " + what + ": the corners make a degenerate triangle");
    TriangleMesh part;
    for (const Vec3& p : {a, b, c, d}) part.positions.insert(part.positions.end(), p.begin(), p.end());
    part.triangles = {0, 1, 2, 0, 2, 3};
    add_part(mesh, std::move(part), material_index(mesh, q.material(), what));
  }
}

}  // namespace tessera::pack
