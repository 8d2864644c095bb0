#pragma once
// PLY meshes (ASCII and binary little endian): vertex x, y, z (+ optional nx, ny, nz and u, v /
// s, t) and a face list of vertex indices. Polygons are fanned into triangles.
#include <filesystem>

#include "common/scene/triangle_mesh.h"

namespace tessera {

TriangleMesh read_ply(const std::filesystem::path& path);

}  // namespace tessera
