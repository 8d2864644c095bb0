#include "scene-packer/replicate.h"

#include "common/base/error.h"
#include "common/scene/aabb.h"

namespace tessera::pack {

TriangleMesh replicate_mesh(const TriangleMesh& mesh, const std::array<uint32_t, 3>& copies) {
  const uint64_t count = uint64_t(copies[0]) * copies[1] * copies[2];
  if (count == 0) throw Error("--replicate needs at least one copy per axis");
  if (count == 1) return mesh;
  if (count * mesh.vertex_count() > 0xF0000000ull || count * mesh.triangle_count() > 0xF0000000ull)
    throw Error("--replicate makes more than 4 billion vertices or triangles");
  Aabb box;
  for (size_t v = 0; v < mesh.vertex_count(); ++v) box.extend(mesh.position(uint32_t(v)));
  TriangleMesh out;
  out.materials = mesh.materials;
  out.textures = mesh.textures;
  out.point_lights = mesh.point_lights;  // lights and the camera stay with the first copy
  out.directional_lights = mesh.directional_lights;
  out.camera = mesh.camera;
  out.warnings = mesh.warnings;
  out.positions.reserve(mesh.positions.size() * count);
  out.normals.reserve(mesh.normals.size() * count);
  out.texcoords.reserve(mesh.texcoords.size() * count);
  out.triangles.reserve(mesh.triangles.size() * count);
  out.triangle_materials.reserve(mesh.triangle_materials.size() * count);
  for (uint32_t z = 0; z < copies[2]; ++z)
    for (uint32_t y = 0; y < copies[1]; ++y)
      for (uint32_t x = 0; x < copies[0]; ++x) {
        const float offset[3] = {x * box.extent(0) * 1.05f, y * box.extent(1) * 1.05f, z * box.extent(2) * 1.05f};
        const uint32_t base = uint32_t(out.vertex_count());
        for (size_t v = 0; v < mesh.vertex_count(); ++v)
          for (int a = 0; a < 3; ++a) out.positions.push_back(mesh.positions[3 * v + a] + offset[a]);
        out.normals.insert(out.normals.end(), mesh.normals.begin(), mesh.normals.end());
        out.texcoords.insert(out.texcoords.end(), mesh.texcoords.begin(), mesh.texcoords.end());
        for (uint32_t i : mesh.triangles) out.triangles.push_back(base + i);
        out.triangle_materials.insert(out.triangle_materials.end(), mesh.triangle_materials.begin(),
                                      mesh.triangle_materials.end());
      }
  return out;
}

}  // namespace tessera::pack
