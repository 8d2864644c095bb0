#pragma once
// Views that show the whole of a scene from outside its bounds: the packer's default camera for a
// scene that brings none, and the turntable pose source. The bounding sphere of the box fills the
// vertical field of view; the view comes from the front (+z), right (+x) and above (+y).
#include <array>

#include "common/render/camera_setup.h"
#include "common/scene/aabb.h"

namespace tessera {

// Distance from the box's centre at which its bounding sphere just fits `vertical_fov_degrees`.
float framing_distance(const Aabb& box, float vertical_fov_degrees);

std::array<float, 3> box_centre(const Aabb& box);

// Looking at the centre from framing_distance along `direction` (need not be unit length).
Pose framing_pose(const Aabb& box, float vertical_fov_degrees, std::array<float, 3> direction = {0.55f, 0.45f, 1.0f});

}  // namespace tessera
