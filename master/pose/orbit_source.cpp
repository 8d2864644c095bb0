#include "master/pose/orbit_source.h"

#include <algorithm>
#include <cmath>

#include "common/base/error.h"

namespace tessera::master {

OrbitSource::OrbitSource(const tpk::Manifest& scene, unsigned frames_per_revolution, float scale)
    : period_(std::max(1u, frames_per_revolution)) {
  if (!(scale > 0.0f && scale <= 100.0f)) throw Error("orbit scale must lie in (0, 100]");
  const auto& b = scene.bounds();
  const std::array<float, 3> lo{b.min().x(), b.min().y(), b.min().z()}, hi{b.max().x(), b.max().y(), b.max().z()};
  for (int i = 0; i < 3; ++i) {
    centre_[i] = 0.5f * (lo[i] + hi[i]);
    radius_[i] = scale * 0.5f * (hi[i] - lo[i]);
  }
  const auto& cam = scene.camera().position();
  if (scene.has_camera()) start_angle_ = std::atan2((cam.z() - centre_[2]) / std::max(radius_[2], 1e-6f),
                                                    (cam.x() - centre_[0]) / std::max(radius_[0], 1e-6f));
  if (radius_[0] <= 0 || radius_[2] <= 0) throw Error("the scene is flat in x or z: no orbit around it");
}

std::optional<PoseSample> OrbitSource::next() {
  const float angle = start_angle_ + 2.0f * float(M_PI) * float(index_ % period_) / float(period_);
  const std::array<float, 3> eye{centre_[0] + radius_[0] * std::cos(angle), centre_[1], centre_[2] + radius_[2] * std::sin(angle)};
  PoseSample sample;
  sample.pose = look_at(eye, centre_, {0, 1, 0});
  sample.time = index_ / 60.0;
  sample.acquired = std::chrono::steady_clock::now();
  ++index_;
  return sample;
}

std::string OrbitSource::describe() const { return "orbit (" + std::to_string(period_) + " poses a revolution)"; }

}  // namespace tessera::master
