#pragma once
// Per-scene settings (proto/scene_settings.proto) in protobuf text format: default camera,
// lights, material overrides, a uniform scale.
#include <filesystem>
#include <optional>

#include "common/scene/triangle_mesh.h"
#include "scene_settings.pb.h"

namespace tessera {

// Throws tessera::Error with file:line:column on a syntax error.
settings::SceneSettings read_scene_settings(const std::filesystem::path& path);

// The settings file that belongs to a mesh: "<dir>/<stem>.scene.txtpb" (stem without .obj/.zst),
// if present.
std::optional<std::filesystem::path> settings_beside(const std::filesystem::path& mesh_path);

// Scale, translation (also of the lights and camera the mesh file brought) and material
// overrides. Unknown material names are an error.
void apply_scene_settings(const settings::SceneSettings& settings, TriangleMesh& mesh);

// The settings' default view: `look_at` (eye, target, up) or `camera`, or none. Throws Error when
// both give a pose or the look_at is degenerate.
std::optional<tpk::Camera> settings_camera(const settings::SceneSettings& settings);

}  // namespace tessera
