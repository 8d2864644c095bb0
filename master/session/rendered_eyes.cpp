#include "master/session/rendered_eyes.h"

#include <algorithm>
#include <cmath>

#include "common/base/error.h"
#include "common/net/message_limits.h"

namespace tessera::master {
namespace {

constexpr double kDegree = M_PI / 180.0;
constexpr double kMaxEdgeAngle = 89.0 * kDegree;  // tan = 57: the frustum stays far inside check_frustum's limits

double widened_edge(double tangent, double degrees, double sign) {
  const double angle = std::atan(tangent);
  const double moved = angle + sign * degrees * kDegree;
  if (sign > 0) return std::tan(std::max(angle, std::min(moved, kMaxEdgeAngle)));
  return std::tan(std::min(angle, std::max(moved, -kMaxEdgeAngle)));
}

// The widened extent [lo', hi'] around the asked [lo, hi] with `pixels` pixels over it, grown to a
// whole number of pixels of the asked size: the extent is stretched (or shrunk by less than half a
// pixel) evenly on both sides so the pixels per tangent unit are exactly the asked ones.
uint32_t grow(double lo, double hi, double wide_lo, double wide_hi, uint32_t pixels, float& out_lo, float& out_hi) {
  const double per_tangent = double(pixels) / (hi - lo);
  const double exact = (wide_hi - wide_lo) * per_tangent;
  const auto grown = uint32_t(std::clamp(std::lround(exact), long(pixels), long(net::kMaxImageSide)));
  const double extra = (double(grown) / per_tangent - (wide_hi - wide_lo)) / 2;
  out_lo = float(wide_lo - extra);
  out_hi = float(wide_hi + extra);
  return grown;
}

}  // namespace

std::array<float, 2> RenderedEyes::rendered_point(const std::array<float, 2>& p) const {
  if (views.empty() || asked.empty()) return p;
  const Frustum &a = asked[0], &f = views[0].frustum;
  const float x = a.left + p[0] * (a.right - a.left), y = a.top - p[1] * (a.top - a.bottom);
  return {std::clamp((x - f.left) / (f.right - f.left), 0.0f, 1.0f), std::clamp((f.top - y) / (f.top - f.bottom), 0.0f, 1.0f)};
}

Frustum widened_frustum(const Frustum& f, float degrees) {
  return {float(widened_edge(f.left, degrees, -1)), float(widened_edge(f.right, degrees, 1)),
          float(widened_edge(f.bottom, degrees, -1)), float(widened_edge(f.top, degrees, 1))};
}

std::vector<EyeView> head_eye_views(const Pose& head, float vertical_fov_degrees, uint32_t width, uint32_t height, bool stereo,
                                    float ipd) {
  if (!(vertical_fov_degrees > 0.0f && vertical_fov_degrees < 179.0f)) throw Error("field of view must lie between 0 and 179 degrees");
  const float t = std::tan(vertical_fov_degrees * 0.5f * float(kDegree));
  const float aspect = float(width) / float(height);
  EyeView eye;
  eye.pose = head;
  eye.frustum = {-t * aspect, t * aspect, -t, t};
  if (!stereo) return {eye};
  const auto right = rotate(head.orientation, {1, 0, 0});
  std::vector<EyeView> eyes(2, eye);
  for (int i = 0; i < 3; ++i) {
    eyes[0].pose.position[size_t(i)] = head.position[size_t(i)] - 0.5f * ipd * right[size_t(i)];
    eyes[1].pose.position[size_t(i)] = head.position[size_t(i)] + 0.5f * ipd * right[size_t(i)];
  }
  return eyes;
}

RenderedEyes rendered_eyes(const PoseSample& pose, const EyeRequest& request) {
  RenderedEyes out;
  out.width = request.width;
  out.height = request.height;
  out.explicit_views = !pose.views.empty();
  out.views = out.explicit_views ? pose.views
                                 : head_eye_views(pose.pose, request.vertical_fov_degrees, request.width, request.height, request.stereo,
                                                  request.ipd);
  for (const EyeView& eye : out.views) out.asked.push_back(eye.frustum);
  const bool widen = request.guard_band_degrees > 0 && (out.explicit_views || request.eye_views_allowed);
  if (!widen) return out;
  out.explicit_views = true;
  out.guard_band_degrees = request.guard_band_degrees;
  // The eyes share one image size: the first eye's growth decides it (XR eyes differ by a few
  // pixels at most), each eye's frustum then spans those pixels at its own asked pixel density.
  for (size_t i = 0; i < out.views.size(); ++i) {
    EyeView& eye = out.views[i];
    const Frustum asked = eye.frustum, wide = widened_frustum(asked, request.guard_band_degrees);
    float l, r, b, t;
    const uint32_t w = grow(asked.left, asked.right, wide.left, wide.right, request.width, l, r);
    const uint32_t h = grow(asked.bottom, asked.top, wide.bottom, wide.top, request.height, b, t);
    if (i == 0) {
      out.width = w;
      out.height = h;
    } else {  // this eye's own growth, stretched to the first eye's pixels around its widened centre
      const double px = double(request.width) / (asked.right - asked.left), py = double(request.height) / (asked.top - asked.bottom);
      const double cx = 0.5 * (double(l) + r), cy = 0.5 * (double(b) + t);
      l = float(cx - 0.5 * out.width / px);
      r = float(cx + 0.5 * out.width / px);
      b = float(cy - 0.5 * out.height / py);
      t = float(cy + 0.5 * out.height / py);
    }
    eye.frustum = {l, r, b, t};
  }
  return out;
}

}  // namespace tessera::master
