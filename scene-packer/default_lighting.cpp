#include "scene-packer/default_lighting.h"

#include <cmath>
#include <cstdio>

namespace tessera::pack {

DefaultLighting default_lighting() {
  DefaultLighting l;
  const float to_sun[3] = {0.3f, 1.0f, 0.6f};
  const float len = std::sqrt(to_sun[0] * to_sun[0] + to_sun[1] * to_sun[1] + to_sun[2] * to_sun[2]);
  l.sun.mutable_direction()->set_x(-to_sun[0] / len);  // the direction the light travels
  l.sun.mutable_direction()->set_y(-to_sun[1] / len);
  l.sun.mutable_direction()->set_z(-to_sun[2] / len);
  l.sun.mutable_radiance()->set_x(3.0f);
  l.sun.mutable_radiance()->set_y(2.9f);
  l.sun.mutable_radiance()->set_z(2.7f);
  l.sky_ambient = 0.3f;
  return l;
}

bool scene_has_lights(const TriangleMesh& mesh, size_t point_lights, size_t directional_lights) {
  if (point_lights > 0 || directional_lights > 0) return true;
  std::vector<bool> used(mesh.materials.size(), false);
  for (uint32_t m : mesh.triangle_materials)
    if (m < used.size()) used[m] = true;
  for (size_t m = 0; m < mesh.materials.size(); ++m)
    if (used[m] && mesh.materials[m].type() == tpk::EMISSIVE) return true;
  return false;
}

std::string describe(const DefaultLighting& l) {
  char line[256];
  std::snprintf(line, sizeof(line),
                "the scene has no lights: added a default sun (direction %.2f,%.2f,%.2f) and sky ambient %.2f "
                "(lights in the scene settings replace them)",
                l.sun.direction().x(), l.sun.direction().y(), l.sun.direction().z(), l.sky_ambient);
  return line;
}

}  // namespace tessera::pack
