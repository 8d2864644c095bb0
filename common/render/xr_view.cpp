#include "common/render/xr_view.h"

#include <cmath>

#include "common/base/error.h"

namespace tessera {
namespace {

using Vec3 = std::array<float, 3>;

float dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

bool near(float value, float expected, float tolerance) { return std::fabs(value - expected) <= tolerance; }

}  // namespace

EyeView eye_view_from_xr(const std::array<float, 16>& transform, const std::array<float, 16>& projection) {
  for (float v : transform)
    if (!std::isfinite(v)) throw Error("XR view: the transform is not finite");
  for (float v : projection)
    if (!std::isfinite(v)) throw Error("XR view: the projection is not finite");
  // Columns of the rigid transform: the eye's x, y and z axes, then its position.
  const Vec3 x{transform[0], transform[1], transform[2]};
  const Vec3 y{transform[4], transform[5], transform[6]};
  const Vec3 z{transform[8], transform[9], transform[10]};
  constexpr float kTolerance = 0.01f;
  const bool affine = near(transform[3], 0, kTolerance) && near(transform[7], 0, kTolerance) &&
                      near(transform[11], 0, kTolerance) && near(transform[15], 1, kTolerance);
  const bool orthonormal = near(dot(x, x), 1, kTolerance) && near(dot(y, y), 1, kTolerance) && near(dot(z, z), 1, kTolerance) &&
                           near(dot(x, y), 0, kTolerance) && near(dot(y, z), 0, kTolerance) && near(dot(z, x), 0, kTolerance);
  const float handedness = dot({x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]}, z);
  if (!affine || !orthonormal || !(handedness > 0))
    throw Error("XR view: the transform is not a rotation and translation (scaled, sheared or mirrored)");

  // A perspective projection maps view z to clip w = -z: its last row is (0, 0, -1, 0).
  const float m0 = projection[0], m5 = projection[5], m8 = projection[8], m9 = projection[9];
  if (!(m0 > 0 && m5 > 0) || !near(projection[11], -1, 1e-3f) || !near(projection[15], 0, 1e-3f) ||
      !near(projection[3], 0, 1e-3f) || !near(projection[7], 0, 1e-3f))
    throw Error("XR view: the projection is not a perspective projection");

  EyeView view;
  view.pose.position = {transform[12], transform[13], transform[14]};
  view.pose.orientation = quaternion_from_axes(x, y, z);
  view.frustum = {(m8 - 1) / m0, (m8 + 1) / m0, (m9 - 1) / m5, (m9 + 1) / m5};
  return checked_eye_view(view, "XR view");
}

}  // namespace tessera
