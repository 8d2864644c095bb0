#include "common/render/eye_view.h"

#include <cmath>

#include "common/base/error.h"

namespace tessera {

EyeView checked_eye_view(const EyeView& view, const std::string& what) {
  for (float v : view.pose.position)
    if (!std::isfinite(v)) throw Error(what + ": the position is not finite");
  const Frustum& f = view.frustum;
  if (!(std::isfinite(f.left) && std::isfinite(f.right) && std::isfinite(f.bottom) && std::isfinite(f.top)))
    throw Error(what + ": the frustum is not finite");
  if (!(f.left < f.right)) throw Error(what + ": empty frustum (left must be less than right)");
  if (!(f.bottom < f.top)) throw Error(what + ": empty frustum (bottom must be less than top)");
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
