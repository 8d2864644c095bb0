#pragma once
// One eye given explicitly, as XR runtimes report each eye: its own pose in world space and its
// own off-axis frustum (eyes may differ in position, orientation and frustum: canted displays,
// asymmetric lenses). The cluster's FrameRequest.eye_views and tessera-render --eye-view carry
// it; both check it here and turn it into the kernels' camera here, so they render the same rays.
#include <string>

#include "common/render/camera_setup.h"

namespace tessera {

struct EyeView {
  Pose pose;
  Frustum frustum{};
};

// The view with its quaternion normalized. Throws Error starting with `what` when the position or
// the frustum is not finite, the quaternion's norm is off by more than 1 %, or the frustum is
// empty (left >= right or bottom >= top).
EyeView checked_eye_view(const EyeView& view, const std::string& what);

// An asymmetric frustum's tangents: finite, not empty, within +-kMaxFrustumTangent and at least
// kMinFrustumExtent wide and tall; else an Error starting with `what`.
inline constexpr float kMaxFrustumTangent = 1000.0f, kMinFrustumExtent = 1e-4f;
void check_frustum(const Frustum& frustum, const std::string& what);

// "px,py,pz,qw,qx,qy,qz,left,right,bottom,top", checked as above.
EyeView parse_eye_view(const std::string& text);

// The camera of the whole width x height image of a checked view.
CameraParams make_eye_camera(const EyeView& view, uint32_t width, uint32_t height);

}  // namespace tessera
