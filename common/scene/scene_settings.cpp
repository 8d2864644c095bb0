#include "common/scene/scene_settings.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include <cmath>
#include <cstring>

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
  return out;
}

std::optional<std::filesystem::path> settings_beside(const std::filesystem::path& mesh_path) {
  std::string stem = mesh_path.filename().string();
  for (const char* ext : {".zst", ".obj", ".ply"})
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
