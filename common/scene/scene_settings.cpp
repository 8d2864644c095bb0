#include "common/scene/scene_settings.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <cmath>
#include <cstring>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/render/camera_setup.h"

namespace tessera {
namespace {

class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (first.empty()) first = std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
  }
  std::string first;
};

}  // namespace

settings::SceneSettings read_scene_settings(const std::filesystem::path& path) {
  const std::string text = read_file_text(path);
  settings::SceneSettings out;
  google::protobuf::TextFormat::Parser parser;
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &out))
    throw Error(path.string() + ":" + (errors.first.empty() ? std::string("cannot parse settings") : errors.first));
  if (out.has_scale() && !(out.scale() > 0.0f && std::isfinite(out.scale()))) throw Error(path.string() + ": scale must be positive");
  if (out.has_scene_scale() && !(out.scene_scale() > 0.0f && std::isfinite(out.scene_scale())))
    throw Error(path.string() + ": scene_scale must be a positive number");
  if (out.has_shadow_catcher()) {
    const auto& c = out.shadow_catcher();
    if (!std::isfinite(c.height())) throw Error(path.string() + ": shadow_catcher height must be a finite number");
    if (!(c.opacity() >= 0.0f && c.opacity() <= 1.0f))
      throw Error(path.string() + ": shadow_catcher opacity must lie in [0, 1] (0: the default, 0.6)");
  }
  return out;
}

std::optional<std::filesystem::path> settings_beside(const std::filesystem::path& mesh_path) {
  std::string stem = mesh_path.filename().string();
  for (const char* ext : {".zst", ".obj", ".ply", ".gltf", ".glb"})
    if (stem.size() > std::strlen(ext) && stem.ends_with(ext)) stem.resize(stem.size() - std::strlen(ext));
  const auto candidate = mesh_path.parent_path() / (stem + ".scene.txtpb");
  if (std::filesystem::exists(candidate)) return candidate;
  return std::nullopt;
}

void apply_scene_settings(const settings::SceneSettings& s, TriangleMesh& mesh) {
  const float scale = s.has_scale() ? s.scale() : 1.0f;
  const float t[3] = {s.translate().x(), s.translate().y(), s.translate().z()};
  if (scale != 1.0f || t[0] != 0 || t[1] != 0 || t[2] != 0)
    for (size_t v = 0; v < mesh.vertex_count(); ++v)
      for (int a = 0; a < 3; ++a) mesh.positions[3 * v + a] = mesh.positions[3 * v + a] * scale + t[a];
  // Lights and the camera a scene file brought move with the mesh; a point light keeps the
  // irradiance it gives the scaled geometry (intensity / distance^2).
  const auto moved = [&](const tpk::Vec3& p) {
    tpk::Vec3 out;
    out.set_x(p.x() * scale + t[0]);
    out.set_y(p.y() * scale + t[1]);
    out.set_z(p.z() * scale + t[2]);
    return out;
  };
  for (auto& light : mesh.point_lights) {
    *light.mutable_position() = moved(light.position());
    light.mutable_intensity()->set_x(light.intensity().x() * scale * scale);
    light.mutable_intensity()->set_y(light.intensity().y() * scale * scale);
    light.mutable_intensity()->set_z(light.intensity().z() * scale * scale);
  }
  if (mesh.camera) *mesh.camera->mutable_position() = moved(mesh.camera->position());

  for (const auto& o : s.materials()) {
    bool matched = false;
    for (auto& m : mesh.materials) {
      if (o.name() != "*" && o.name() != m.name()) continue;
      matched = true;
      if (o.has_type()) m.set_type(o.type());
      if (o.has_diffuse()) *m.mutable_diffuse() = o.diffuse();
      if (o.has_emission()) *m.mutable_emission() = o.emission();
      if (o.has_ior()) m.set_ior(o.ior());
    }
    if (!matched) throw Error("scene settings: no material named '" + o.name() + "'");
  }
}

}  // namespace tessera

namespace tessera {

std::optional<tpk::Camera> settings_camera(const settings::SceneSettings& s) {
  if (!s.has_look_at()) return s.has_camera() ? std::optional(s.camera()) : std::nullopt;
  const auto& c = s.camera();
  if (s.has_camera() && (c.has_position() || c.qw() != 0 || c.qx() != 0 || c.qy() != 0 || c.qz() != 0))
    throw Error("scene settings: give the camera's position and quaternion or look_at, not both");
  const auto& l = s.look_at();
  const auto arr = [](const tpk::Vec3& v) { return std::array<float, 3>{v.x(), v.y(), v.z()}; };
  if (!l.has_eye() || !l.has_target()) throw Error("scene settings: look_at needs eye and target");
  const std::array<float, 3> up = l.has_up() ? arr(l.up()) : std::array<float, 3>{0, 1, 0};
  Pose pose;
  try {
    pose = look_at(arr(l.eye()), arr(l.target()), up);
  } catch (const Error& e) {
    throw Error(std::string("scene settings: look_at: ") + e.what());
  }
  tpk::Camera camera;
  *camera.mutable_position() = l.eye();
  camera.set_qw(pose.orientation[0]);
  camera.set_qx(pose.orientation[1]);
  camera.set_qy(pose.orientation[2]);
  camera.set_qz(pose.orientation[3]);
  camera.set_vertical_fov_degrees(c.vertical_fov_degrees());
  return camera;
}

}  // namespace tessera
