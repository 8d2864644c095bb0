#include "scene-packer/scene_values.h"

#include <cmath>
#include <sstream>

#include "common/base/error.h"

namespace tessera::pack {
namespace {

std::string text(const tpk::Vec3& v) {
  std::ostringstream out;
  out << "(" << v.x() << ", " << v.y() << ", " << v.z() << ")";
  return out.str();
}

bool finite(const tpk::Vec3& v) { return std::isfinite(v.x()) && std::isfinite(v.y()) && std::isfinite(v.z()); }
// NaN fails every comparison, so this is false for it too
bool non_negative(const tpk::Vec3& v) { return finite(v) && v.x() >= 0 && v.y() >= 0 && v.z() >= 0; }

void require(bool ok, const std::string& name, const std::string& what, const std::string& need) {
  if (!ok) throw Error(name + ": " + what + " (needs " + need + ")");
}

}  // namespace

void check_scene_values(const TriangleMesh& mesh, const std::string& name) {
  for (const tpk::Material& m : mesh.materials) {
    const std::string label = "material '" + m.name() + "'";
    require(non_negative(m.diffuse()), name, label + " has colour " + text(m.diffuse()), "finite values of 0 or more");
    require(non_negative(m.emission()), name, label + " has emission " + text(m.emission()), "finite values of 0 or more");
    if (m.type() == tpk::GLASS)
      require(std::isfinite(m.ior()) && m.ior() > 0, name, label + " has index of refraction " + std::to_string(m.ior()),
              "a finite value above 0");
  }
  for (size_t i = 0; i < mesh.point_lights.size(); ++i) {
    const tpk::PointLight& l = mesh.point_lights[i];
    const std::string label = "point light " + std::to_string(i);
    require(finite(l.position()), name, label + " is at " + text(l.position()), "a finite position");
    require(non_negative(l.intensity()), name, label + " has intensity " + text(l.intensity()), "finite values of 0 or more");
  }
  for (size_t i = 0; i < mesh.directional_lights.size(); ++i) {
    const tpk::DirectionalLight& l = mesh.directional_lights[i];
    const std::string label = "directional light " + std::to_string(i);
    require(finite(l.direction()), name, label + " points along " + text(l.direction()), "a finite direction");
    require(non_negative(l.radiance()), name, label + " has radiance " + text(l.radiance()), "finite values of 0 or more");
  }
  if (mesh.camera) {
    const tpk::Camera& c = *mesh.camera;
    require(finite(c.position()), name, "the camera is at " + text(c.position()), "a finite position");
    require(std::isfinite(c.qw()) && std::isfinite(c.qx()) && std::isfinite(c.qy()) && std::isfinite(c.qz()), name,
            "the camera's orientation is not finite", "a finite quaternion");
  }
}

}  // namespace tessera::pack
