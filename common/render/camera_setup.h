#pragma once
// Host side of the camera: 6-DOF poses (position + unit quaternion) turned into the kernels'
// CameraParams, look-at poses, and parsing of the pose strings programs accept.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "kernels/render/camera.h"
#include "tpk.pb.h"

namespace tessera {

struct Pose {
  std::array<float, 3> position{0, 0, 0};
  std::array<float, 4> orientation{1, 0, 0, 0};  // unit quaternion w, x, y, z; camera looks down -z, +y up
};

// Off-axis frustum as tangents at unit distance (left < right, bottom < top), as VR runtimes give.
struct Frustum {
  float left, right, bottom, top;
};

struct CameraSpec {
  Pose pose;
  float vertical_fov_degrees = 60.0f;
  std::optional<Frustum> frustum;  // overrides the field of view when set
  float eye_offset = 0.0f;         // along the head's right vector (stereo: -ipd/2 left, +ipd/2 right)
};

CameraParams make_camera(const CameraSpec& spec, uint32_t width, uint32_t height);

// The unit quaternion of the rotation whose columns are the camera's axes in world space: x
// (right), y (up) and z (backwards; the camera looks down -z). The axes must be orthonormal.
std::array<float, 4> quaternion_from_axes(const std::array<float, 3>& x, const std::array<float, 3>& y,
                                          const std::array<float, 3>& z);

// A pose at `eye` looking at `target` with `up` roughly up. Throws Error when degenerate.
Pose look_at(const std::array<float, 3>& eye, const std::array<float, 3>& target, const std::array<float, 3>& up);

Pose pose_from_manifest(const tpk::Camera& camera);

// "px,py,pz,qw,qx,qy,qz". A quaternion whose norm is off by more than 1 % is refused (it is not
// a rotation; guessing would show a wrong view); smaller errors are normalized silently.
Pose parse_pose(const std::string& text);
std::array<float, 3> parse_vec3(const std::string& text, const std::string& what);
// Exactly `count` comma-separated finite numbers; Error naming `what` and the text otherwise.
std::vector<float> parse_floats(const std::string& text, size_t count, const std::string& what);
// `q` normalized when its norm is within 1 % of 1; otherwise Error "<what>: the quaternion's norm
// is N, not 1 ..." (a NaN norm included).
std::array<float, 4> unit_rotation(const std::array<float, 4>& q, const std::string& what);

// The --fov option of the programs: 0 means the scene's own; anything else must lie strictly
// between 0 and 179 degrees (NaN and negative values are a UsageError, never silently the default).
void check_fov_option(double degrees);

// Applies the pose's rotation to a vector.
std::array<float, 3> rotate(const std::array<float, 4>& q, const std::array<float, 3>& v);

}  // namespace tessera
