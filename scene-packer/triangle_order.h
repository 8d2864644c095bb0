#pragma once
// The order the packer numbers triangles in: by object, then by material (the .tpk's material runs),
// then along a Morton curve through their centroids. Nearby triangles get nearby numbers, so a
// kd-tree leaf's triangles lie close in index and its list takes 8 bits a triangle in the compact
// scene-memory profile (narrow lists, kernels/accel/kdtree_layout.h).
#include <cstdint>
#include <vector>

#include "common/scene/triangle_mesh.h"

namespace tessera::pack {

// Sorts `triangles` (indices into mesh) in that order; object_of: each triangle's object, or empty
// for a scene of one mesh. Deterministic: ties keep their input order.
void order_triangles(const TriangleMesh& mesh, const std::vector<uint32_t>& object_of, std::vector<uint32_t>& triangles);

}  // namespace tessera::pack
