#include "common/scene/animation_player.h"

#include <algorithm>
#include <cmath>

namespace tessera::anim {
namespace {

void normalize(float* q) {
  const double length = std::sqrt(double(q[0]) * q[0] + double(q[1]) * q[1] + double(q[2]) * q[2] + double(q[3]) * q[3]);
  if (!(length > 0.0)) {  // a spline may pass through zero between valid keys: show no rotation there
    q[0] = q[1] = q[2] = 0.0f;
    q[3] = 1.0f;
    return;
  }
  for (int i = 0; i < 4; ++i) q[i] = float(q[i] / length);
}

// glTF 2.0 Appendix C: spherical interpolation along the shorter arc, linear where the keys are
// nearly parallel (sin theta would lose all precision there).
void slerp(const float* a, const float* b_in, double s, float* out) {
  double b[4] = {b_in[0], b_in[1], b_in[2], b_in[3]};
  double d = double(a[0]) * b[0] + double(a[1]) * b[1] + double(a[2]) * b[2] + double(a[3]) * b[3];
  const double length_a = std::sqrt(double(a[0]) * a[0] + double(a[1]) * a[1] + double(a[2]) * a[2] + double(a[3]) * a[3]);
  const double length_b = std::sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2] + b[3] * b[3]);
  d /= length_a * length_b;  // keys are normalized here, not trusted to be
  if (d < 0.0) {
    for (double& c : b) c = -c;
    d = -d;
  }
  double wa = 1.0 - s, wb = s;
  if (d < 0.9995) {
    const double theta = std::acos(d), sin_theta = std::sin(theta);
    wa = std::sin((1.0 - s) * theta) / sin_theta;
    wb = std::sin(s * theta) / sin_theta;
  }
  for (int i = 0; i < 4; ++i) out[i] = float(wa * a[i] / length_a + wb * b[i] / length_b);
  normalize(out);
}

}  // namespace

bool parse_playback(std::string_view text, Playback* out) {
  if (text == "loop") *out = Playback::loop;
  else if (text == "clamp") *out = Playback::clamp;
  else return false;
  return true;
}

double animation_time(const Animation& animation, double seconds, Playback playback) {
  const double duration = animation.duration;
  if (!(duration > 0.0) || !std::isfinite(seconds)) return 0.0;
  if (playback == Playback::clamp) return std::clamp(seconds, 0.0, duration);
  double t = std::fmod(seconds, duration);
  if (t < 0.0) t += duration;
  return t < duration ? t : 0.0;  // -tiny + duration may round up to duration
}

void sample_channel(const Channel& channel, double t, float* out) {
  const int n = target_components(channel.target);
  const bool cubic = channel.interpolation == Interpolation::cubic_spline;
  const size_t per_key = size_t(n) * (cubic ? 3 : 1);
  const size_t value_at = cubic ? size_t(n) : 0;  // a cubic key's value sits between its tangents
  const std::vector<float>& times = channel.times;
  const float* values = channel.values.data();
  const auto key_value = [&](size_t k) {
    std::copy_n(values + k * per_key + value_at, n, out);
    if (channel.target == Target::rotation) normalize(out);
  };
  if (times.size() == 1 || t <= times.front()) return key_value(0);
  if (t >= times.back()) return key_value(times.size() - 1);
  // times[k] <= t < times[k + 1]
  const size_t k = size_t(std::upper_bound(times.begin(), times.end(), t, [](double x, float y) { return x < double(y); }) -
                          times.begin()) - 1;
  const double interval = double(times[k + 1]) - double(times[k]);
  const double s = (t - double(times[k])) / interval;
  const float* v0 = values + k * per_key + value_at;
  const float* v1 = values + (k + 1) * per_key + value_at;
  switch (channel.interpolation) {
    case Interpolation::step: return key_value(k);
    case Interpolation::linear:
      if (channel.target == Target::rotation) return slerp(v0, v1, s, out);
      for (int i = 0; i < n; ++i) out[i] = float(double(v0[i]) + s * (double(v1[i]) - double(v0[i])));
      return;
    case Interpolation::cubic_spline: {
      // p(s) = (2s^3 - 3s^2 + 1) v_k + td (s^3 - 2s^2 + s) b_k + (-2s^3 + 3s^2) v_k+1 + td (s^3 - s^2) a_k+1
      const float* out_tangent = v0 + n;     // b_k
      const float* in_tangent = v1 - n;      // a_k+1
      const double s2 = s * s, s3 = s2 * s;
      const double h00 = 2 * s3 - 3 * s2 + 1, h10 = s3 - 2 * s2 + s, h01 = -2 * s3 + 3 * s2, h11 = s3 - s2;
      for (int i = 0; i < n; ++i)
        out[i] = float(h00 * v0[i] + interval * h10 * out_tangent[i] + h01 * v1[i] + interval * h11 * in_tangent[i]);
      if (channel.target == Target::rotation) normalize(out);
      return;
    }
  }
}

std::array<float, 16> trs_matrix(const Trs& trs) {
  const double x = trs.rotation[0], y = trs.rotation[1], z = trs.rotation[2], w = trs.rotation[3];
  const double r[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                          {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                          {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
  std::array<float, 16> m{};
  for (int column = 0; column < 3; ++column)
    for (int row = 0; row < 3; ++row) m[size_t(column * 4 + row)] = float(r[row][column] * trs.scale[size_t(column)]);
  for (int row = 0; row < 3; ++row) m[size_t(12 + row)] = trs.translation[size_t(row)];
  m[15] = 1.0f;
  return m;
}

std::array<float, 16> multiply(const std::array<float, 16>& a, const std::array<float, 16>& b) {
  std::array<float, 16> m{};
  for (int column = 0; column < 4; ++column)
    for (int row = 0; row < 4; ++row) {
      double sum = 0.0;
      for (int k = 0; k < 4; ++k) sum += double(a[size_t(k * 4 + row)]) * double(b[size_t(column * 4 + k)]);
      m[size_t(column * 4 + row)] = float(sum);
    }
  return m;
}

bool evaluate(const AnimatedScene& scene, double seconds, Playback playback, Pose& pose) {
  const size_t count = scene.nodes.size();
  pose.local.resize(count);
  pose.world.resize(count);
  for (size_t n = 0; n < count; ++n) pose.local[n] = scene.nodes[n].rest;
  for (const Animation& animation : scene.animations) {
    const double t = animation_time(animation, seconds, playback);
    for (const Channel& channel : animation.channels) {
      Trs& local = pose.local[channel.node];
      float* target = channel.target == Target::translation ? local.translation.data()
                      : channel.target == Target::rotation  ? local.rotation.data()
                                                            : local.scale.data();
      sample_channel(channel, t, target);
    }
  }
  bool finite = true;
  for (uint32_t n : scene.order) {
    const Node& node = scene.nodes[n];
    const std::array<float, 16> local = node.has_matrix ? node.matrix : trs_matrix(pose.local[n]);
    pose.world[n] = node.parent >= 0 ? multiply(pose.world[size_t(node.parent)], local) : local;
    for (float v : pose.world[n]) finite &= std::isfinite(v);
  }
  return finite;
}

}  // namespace tessera::anim
