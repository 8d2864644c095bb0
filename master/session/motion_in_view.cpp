#include "master/session/motion_in_view.h"

#include <array>

namespace tessera::master {

namespace {

using Vec3 = std::array<double, 3>;

Vec3 world_axis(const std::array<float, 4>& orientation, const std::array<float, 3>& axis) {
  const auto v = rotate(orientation, axis);
  return {v[0], v[1], v[2]};
}

bool same_box(const Aabb& a, const Aabb& b) { return a.min == b.min && a.max == b.max; }

}  // namespace

bool box_in_view(const Aabb& box, const EyeView& eye) {
  if (box.empty()) return false;
  const Vec3 right = world_axis(eye.pose.orientation, {1, 0, 0}), up = world_axis(eye.pose.orientation, {0, 1, 0}),
             back = world_axis(eye.pose.orientation, {0, 0, 1});
  const Frustum& f = eye.frustum;
  // Inward normals in the eye's frame (x right, y up, z back; the eye looks down -z, depth d = -z):
  // x >= left d, x <= right d, y >= bottom d, y <= top d, d >= 0.
  const std::array<Vec3, 5> planes{{{1, 0, double(f.left)}, {-1, 0, -double(f.right)}, {0, 1, double(f.bottom)},
                                    {0, -1, -double(f.top)}, {0, 0, -1}}};
  for (const Vec3& n : planes) {
    Vec3 normal;
    for (size_t k = 0; k < 3; ++k) normal[k] = n[0] * right[k] + n[1] * up[k] + n[2] * back[k];
    // The box's corner furthest along the normal: when even it is outside, the whole box is.
    double furthest = 0;
    for (size_t k = 0; k < 3; ++k)
      furthest += normal[k] * ((normal[k] >= 0 ? double(box.max[k]) : double(box.min[k])) - double(eye.pose.position[k]));
    if (furthest < 0) return false;
  }
  return true;
}

bool moved_in_view(std::span<const Aabb> before, std::span<const Aabb> after, std::span<const EyeView> eyes) {
  if (before.size() != after.size()) return true;
  for (size_t i = 0; i < before.size(); ++i) {
    if (same_box(before[i], after[i])) continue;
    for (const EyeView& eye : eyes)
      if (box_in_view(before[i], eye) || box_in_view(after[i], eye)) return true;
  }
  return false;
}

}  // namespace tessera::master
