#pragma once
// Scene composition from the settings file (proto/scene_settings.proto): new materials, meshes
// included with a transform, and generated shapes (icospheres, boxes, quads) appended to the
// input mesh. This is how one settings file describes the path tracer's scenes, a model on a
// table in a Cornell box with a mirror and a glass sphere (Kim & Sung 2021, §4). Deterministic:
// the same settings give the same triangles in the same order.
#include <filesystem>
#include <string>
#include <vector>

#include "common/scene/mesh_loader.h"
#include "common/scene/triangle_mesh.h"
#include "scene_settings.pb.h"

namespace tessera::pack {

struct ComposeOptions {
  std::filesystem::path settings_dir;               // relative include paths are tried here first,
  std::vector<std::filesystem::path> include_dirs;  // then in these folders, in order
  MeshLoadOptions load;                             // for included meshes
};

// True when the settings add anything (materials, meshes or shapes).
bool has_composition(const settings::SceneSettings& settings);

// Appends add_materials, includes, spheres, boxes and quads (in that order) to `mesh`. When any
// part has vertex normals, parts without get flat ones (their vertices are split per triangle),
// so the result renders exactly as the parts did alone. Throws Error naming the entry at fault.
void compose_scene(const settings::SceneSettings& settings, const ComposeOptions& options, TriangleMesh& mesh);

// Where an include path resolves to (see ComposeOptions); Error listing the places tried if none.
std::filesystem::path resolve_include(const std::string& path, const ComposeOptions& options);

// An icosphere of `subdivisions` (0..6) levels: 20 * 4^subdivisions triangles, unit radius,
// normals equal to the positions. Exposed for tests.
TriangleMesh make_icosphere(uint32_t subdivisions);

}  // namespace tessera::pack
