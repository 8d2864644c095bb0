#pragma once
// Axis-aligned bounding box on the host.
#include <algorithm>
#include <array>
#include <limits>

namespace tessera {

struct Aabb {
  std::array<float, 3> min{std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::infinity()};
  std::array<float, 3> max{-std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity()};

  void extend(const std::array<float, 3>& p) {
    for (int a = 0; a < 3; ++a) {
      min[a] = std::min(min[a], p[a]);
      max[a] = std::max(max[a], p[a]);
    }
  }
  bool empty() const { return min[0] > max[0]; }
  float extent(int axis) const { return max[axis] - min[axis]; }
  int longest_axis() const {
    int axis = 0;
    for (int a = 1; a < 3; ++a)
      if (extent(a) > extent(axis)) axis = a;
    return axis;
  }
  float surface_area() const {
    const float dx = extent(0), dy = extent(1), dz = extent(2);
    return 2.0f * (dx * dy + dy * dz + dz * dx);
  }
};

}  // namespace tessera
