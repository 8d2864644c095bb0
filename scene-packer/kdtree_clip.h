#pragma once
// Bounds of the part of a triangle inside a box ("perfect splits", Wald & Havran 2006 §4.3).
#include <array>

#include "scene-packer/kdtree_tree.h"

namespace tessera::pack::kd {

// Clips the triangle to the closed box (in double precision) and writes the bounds of what is
// left, rounded outwards to float and kept inside the box. Returns false when nothing is left;
// a triangle that only touches the box still counts as inside.
bool clip_triangle_bounds(const std::array<std::array<float, 3>, 3>& triangle, const Box& box, Box* out);

}  // namespace tessera::pack::kd
