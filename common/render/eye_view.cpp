#include "common/render/eye_view.h"

#include <cmath>

#include "common/base/error.h"

namespace tessera {

void check_frustum(const Frustum& f, const std::string& what) {
  if (!(std::isfinite(f.left) && std::isfinite(f.right) && std::isfinite(f.bottom) && std::isfinite(f.top)))
    throw Error(what + ": the frustum is not finite");
  if (!(f.left < f.right)) throw Error(what + ": empty frustum (left must be less than right)");
  if (!(f.bottom < f.top)) throw Error(what + ": empty frustum (bottom must be less than top)");
  // tangents: beyond 1000 (89.94 degrees) or narrower than 1e-4 no camera sees anything useful, and
  // the pixel footprints (differences of huge or tiny numbers) lose every digit
  for (float v : {f.left, f.right, f.bottom, f.top})
    if (std::fabs(v) > kMaxFrustumTangent) throw Error(what + ": frustum tangents must lie within +-1000");
  if (!(f.right - f.left >= kMinFrustumExtent && f.top - f.bottom >= kMinFrustumExtent))
    throw Error(what + ": the frustum is narrower than 1e-4");
}

EyeView checked_eye_view(const EyeView& view, const std::string& what) {
  for (float v : view.pose.position)
    if (!std::isfinite(v)) throw Error(what + ": the position is not finite");
  check_frustum(view.frustum, what);
  EyeView checked = view;
  checked.pose.orientation = unit_rotation(view.pose.orientation, what);
  return checked;
}

EyeView parse_eye_view(const std::string& text) {
  const auto v = parse_floats(text, 11, "--eye-view (px,py,pz,qw,qx,qy,qz,left,right,bottom,top)");
  EyeView view;
  view.pose.position = {v[0], v[1], v[2]};
  view.pose.orientation = {v[3], v[4], v[5], v[6]};
  view.frustum = {v[7], v[8], v[9], v[10]};
  return checked_eye_view(view, "bad --eye-view '" + text + "'");
}

CameraParams make_eye_camera(const EyeView& view, uint32_t width, uint32_t height) {
  CameraSpec spec;
  spec.pose = view.pose;
  spec.frustum = view.frustum;
  return make_camera(spec, width, height);
}

}  // namespace tessera
