#pragma once
// Copies a mesh onto an nx × ny × nz grid (5 % gap between copies), sharing materials and
// textures: a way to build scenes of Power Plant size (48 × Crytek Sponza ≈ 12.6 M triangles)
// from the shared test scenes so that memory and scale can be measured.
#include <array>

#include "common/scene/triangle_mesh.h"

namespace tessera::pack {

TriangleMesh replicate_mesh(const TriangleMesh& mesh, const std::array<uint32_t, 3>& copies);

}  // namespace tessera::pack
