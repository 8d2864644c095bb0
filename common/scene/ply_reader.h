#pragma once
// PLY meshes (ASCII and binary little endian): vertex x, y, z (+ optional nx, ny, nz and u, v /
// s, t) and a face list of vertex indices. Polygons are fanned into triangles.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "common/scene/triangle_mesh.h"

namespace tessera {

TriangleMesh read_ply(const std::filesystem::path& path);
// The same from the file's bytes; `file` names it in errors.
TriangleMesh parse_ply(std::span<const uint8_t> data, const std::string& file);

}  // namespace tessera
