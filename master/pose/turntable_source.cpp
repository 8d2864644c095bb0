#include "master/pose/turntable_source.h"

#include <algorithm>
#include <cmath>

#include "common/base/error.h"
#include "common/render/framing.h"

namespace tessera::master {
namespace {

constexpr float kElevationDegrees = 20.0f;  // looking slightly down shows the tops as well as the sides

}  // namespace

TurntableSource::TurntableSource(const tpk::Manifest& scene, unsigned frames_per_revolution, float scale,
                                 float vertical_fov_degrees)
    : period_(std::max(1u, frames_per_revolution)) {
  if (!(scale > 0.0f && scale <= 100.0f)) throw Error("turntable: --orbit-scale must lie in (0, 100]");
  float fov = vertical_fov_degrees > 0 ? vertical_fov_degrees : scene.camera().vertical_fov_degrees();
  if (!(fov > 0.0f && fov < 179.0f)) fov = 60.0f;
  const auto& b = scene.bounds();
  Aabb box;
  box.extend({b.min().x(), b.min().y(), b.min().z()});
  box.extend({b.max().x(), b.max().y(), b.max().z()});
  centre_ = box_centre(box);
  const float distance = framing_distance(box, fov) * scale;
  const float elevation = kElevationDegrees * float(M_PI) / 180.0f;
  radius_ = distance * std::cos(elevation);
  height_ = distance * std::sin(elevation);
}

std::optional<PoseSample> TurntableSource::next() {
  const float angle = 2.0f * float(M_PI) * float(index_ % period_) / float(period_);
  const std::array<float, 3> eye{centre_[0] + radius_ * std::sin(angle), centre_[1] + height_, centre_[2] + radius_ * std::cos(angle)};
  PoseSample sample;
  sample.pose = look_at(eye, centre_, {0, 1, 0});
  sample.time = index_ / 60.0;
  sample.acquired = std::chrono::steady_clock::now();
  ++index_;
  return sample;
}

std::string TurntableSource::describe() const {
  return "turntable (" + std::to_string(period_) + " poses a revolution)";
}

}  // namespace tessera::master
