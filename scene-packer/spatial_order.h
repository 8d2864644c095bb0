#pragma once
// Memory order of triangles for traversal speed. A ray tests the triangles of the leaves it
// visits, and a leaf's triangles lie close together in space; storing triangles (and, through
// first-use renumbering, their vertices) in Morton order of their centroids puts them in the
// same cache lines, which the kernels feel as fewer misses per triangle test.
#include <cstdint>
#include <vector>

namespace tessera::pack {

// Morton code (10 bits an axis) of each listed triangle's centroid inside the box of all vertices.
// positions: xyz per vertex; triangles: 3 vertex indices a triangle; which: triangles to encode.
std::vector<uint32_t> centroid_morton_codes(const std::vector<float>& positions, const std::vector<uint32_t>& triangles,
                                            const std::vector<uint32_t>& which);

}  // namespace tessera::pack
