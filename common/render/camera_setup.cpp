#include "common/render/camera_setup.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "common/base/error.h"
#include "common/base/usage_error.h"

namespace tessera {
namespace {

using Vec3 = std::array<float, 3>;

Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
float dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec3 normalized(const Vec3& v) {
  const float len = std::sqrt(dot(v, v));
  return {v[0] / len, v[1] / len, v[2] / len};
}

}  // namespace

std::vector<float> parse_floats(const std::string& text, size_t count, const std::string& what) {
  std::vector<float> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    char* end = nullptr;
    const float v = std::strtof(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !std::isfinite(v))
      throw UsageError("bad " + what + " '" + text + "': '" + item + "' is not a finite number");
    values.push_back(v);
  }
  if (values.size() != count)
    throw UsageError("bad " + what + " '" + text + "': expected " + std::to_string(count) + " comma-separated numbers");
  return values;
}

std::array<float, 4> unit_rotation(const std::array<float, 4>& q, const std::string& what) {
  const float n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (!(std::fabs(n - 1.0f) <= 0.01f)) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.4g", n);
    throw Error(what + ": the quaternion's norm is " + buffer + ", not 1 (refusing to guess a rotation)");
  }
  return {q[0] / n, q[1] / n, q[2] / n, q[3] / n};
}

Vec3 rotate(const std::array<float, 4>& q, const Vec3& v) {
  // v' = v + 2 w (u x v) + 2 u x (u x v), u = (x, y, z)
  const Vec3 u{q[1], q[2], q[3]};
  const Vec3 t = cross(u, v);
  const Vec3 t2{2 * t[0], 2 * t[1], 2 * t[2]};
  const Vec3 c = cross(u, t2);
  return {v[0] + q[0] * t2[0] + c[0], v[1] + q[0] * t2[1] + c[1], v[2] + q[0] * t2[2] + c[2]};
}

CameraParams make_camera(const CameraSpec& spec, uint32_t width, uint32_t height) {
  if (width == 0 || height == 0) throw Error("image size must be positive");
  const auto& q = spec.pose.orientation;
  const Vec3 right = rotate(q, {1, 0, 0}), up = rotate(q, {0, 1, 0}), forward = rotate(q, {0, 0, -1});
  CameraParams c{};
  c.pos_x = spec.pose.position[0] + right[0] * spec.eye_offset;
  c.pos_y = spec.pose.position[1] + right[1] * spec.eye_offset;
  c.pos_z = spec.pose.position[2] + right[2] * spec.eye_offset;
  c.right_x = right[0];
  c.right_y = right[1];
  c.right_z = right[2];
  c.up_x = up[0];
  c.up_y = up[1];
  c.up_z = up[2];
  c.fwd_x = forward[0];
  c.fwd_y = forward[1];
  c.fwd_z = forward[2];
  if (spec.frustum) {
    c.left = spec.frustum->left;
    c.right = spec.frustum->right;
    c.bottom = spec.frustum->bottom;
    c.top = spec.frustum->top;
  } else {
    if (!(spec.vertical_fov_degrees > 0.0f && spec.vertical_fov_degrees < 179.0f))
      throw Error("field of view must lie between 0 and 179 degrees");
    const float t = std::tan(spec.vertical_fov_degrees * 0.5f * float(M_PI) / 180.0f);
    const float aspect = float(width) / float(height);
    c.top = t;
    c.bottom = -t;
    c.right = t * aspect;
    c.left = -t * aspect;
  }
  c.width = width;
  c.height = height;
  return c;
}

std::array<float, 4> quaternion_from_axes(const Vec3& x_axis, const Vec3& y_axis, const Vec3& z_axis) {
  // Rotation matrix columns: the camera's x, y and z axes.
  const float m00 = x_axis[0], m01 = y_axis[0], m02 = z_axis[0];
  const float m10 = x_axis[1], m11 = y_axis[1], m12 = z_axis[1];
  const float m20 = x_axis[2], m21 = y_axis[2], m22 = z_axis[2];
  const float trace = m00 + m11 + m22;
  float w, x, y, z;
  if (trace > 0) {
    const float s = std::sqrt(trace + 1.0f) * 2;
    w = 0.25f * s;
    x = (m21 - m12) / s;
    y = (m02 - m20) / s;
    z = (m10 - m01) / s;
  } else if (m00 > m11 && m00 > m22) {
    const float s = std::sqrt(1.0f + m00 - m11 - m22) * 2;
    w = (m21 - m12) / s;
    x = 0.25f * s;
    y = (m01 + m10) / s;
    z = (m02 + m20) / s;
  } else if (m11 > m22) {
    const float s = std::sqrt(1.0f + m11 - m00 - m22) * 2;
    w = (m02 - m20) / s;
    x = (m01 + m10) / s;
    y = 0.25f * s;
    z = (m12 + m21) / s;
  } else {
    const float s = std::sqrt(1.0f + m22 - m00 - m11) * 2;
    w = (m10 - m01) / s;
    x = (m02 + m20) / s;
    y = (m12 + m21) / s;
    z = 0.25f * s;
  }
  const float n = std::sqrt(w * w + x * x + y * y + z * z);
  return {w / n, x / n, y / n, z / n};
}

Pose look_at(const Vec3& eye, const Vec3& target, const Vec3& up_hint) {
  const Vec3 d{target[0] - eye[0], target[1] - eye[1], target[2] - eye[2]};
  if (dot(d, d) == 0.0f) throw UsageError("--eye and --target are the same point");
  const Vec3 f = normalized(d);
  const Vec3 r0 = cross(f, up_hint);
  if (dot(r0, r0) < 1e-12f) throw UsageError("--up is parallel to the viewing direction");
  const Vec3 r = normalized(r0);
  const Vec3 u = cross(r, f);
  Pose pose;
  pose.position = eye;
  pose.orientation = quaternion_from_axes(r, u, {-f[0], -f[1], -f[2]});
  return pose;
}

Pose pose_from_manifest(const tpk::Camera& camera) {
  Pose pose;
  pose.position = {camera.position().x(), camera.position().y(), camera.position().z()};
  std::array<float, 4> q{camera.qw(), camera.qx(), camera.qy(), camera.qz()};
  const float n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  pose.orientation = n > 0 ? std::array<float, 4>{q[0] / n, q[1] / n, q[2] / n, q[3] / n} : std::array<float, 4>{1, 0, 0, 0};
  return pose;
}

void check_fov_option(double degrees) {
  if (degrees != 0 && !(degrees > 0 && degrees < 179)) throw UsageError("--fov must lie between 0 and 179 degrees");
}

Pose parse_pose(const std::string& text) {
  const auto v = parse_floats(text, 7, "pose");
  Pose pose;
  pose.position = {v[0], v[1], v[2]};
  pose.orientation = unit_rotation({v[3], v[4], v[5], v[6]}, "bad pose '" + text + "'");
  return pose;
}

Vec3 parse_vec3(const std::string& text, const std::string& what) {
  const auto v = parse_floats(text, 3, what);
  return {v[0], v[1], v[2]};
}

}  // namespace tessera
