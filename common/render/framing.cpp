#include "common/render/framing.h"

#include <cmath>

#include "common/base/error.h"

namespace tessera {

std::array<float, 3> box_centre(const Aabb& box) {
  return {0.5f * (box.min[0] + box.max[0]), 0.5f * (box.min[1] + box.max[1]), 0.5f * (box.min[2] + box.max[2])};
}

float framing_distance(const Aabb& box, float vertical_fov_degrees) {
  if (box.empty()) throw Error("an empty scene cannot be framed");
  const float radius = 0.5f * std::sqrt(box.extent(0) * box.extent(0) + box.extent(1) * box.extent(1) + box.extent(2) * box.extent(2));
  const float half_fov = 0.5f * vertical_fov_degrees * float(M_PI) / 180.0f;
  return std::max(radius, 1e-6f) / std::sin(half_fov) * 1.05f;  // 5 % margin
}

Pose framing_pose(const Aabb& box, float vertical_fov_degrees, std::array<float, 3> direction) {
  const std::array<float, 3> centre = box_centre(box);
  const float len = std::sqrt(direction[0] * direction[0] + direction[1] * direction[1] + direction[2] * direction[2]);
  const float distance = framing_distance(box, vertical_fov_degrees);
  std::array<float, 3> eye;
  for (int a = 0; a < 3; ++a) eye[a] = centre[a] + direction[a] / len * distance;
  return look_at(eye, centre, {0, 1, 0});
}

}  // namespace tessera
