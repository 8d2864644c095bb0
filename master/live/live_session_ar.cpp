// The live session's AR requests (master/web/PROTOCOL.md, "Headset display"): tap-to-place sets the
// shadow catcher's height; light estimation drives the scene's sun.
#include <algorithm>
#include <cmath>

#include "master/live/live_session.h"

namespace tessera::master::live {
namespace {

// A light estimate this close to the sun in force changes nothing worth a new render (AR pages
// estimate the light every frame, with noise).
constexpr float kSunDirectionTolerance = 0.9999f;  // cos of about 0.8 degrees
constexpr float kSunIrradianceTolerance = 0.02f;   // relative

wire::Vec3 wire_vec3(const std::array<float, 3>& v) {
  wire::Vec3 out;
  out.set_x(v[0]);
  out.set_y(v[1]);
  out.set_z(v[2]);
  return out;
}

bool same_sun(const wire::SunOverride& a, const wire::SunOverride& b) {
  auto unit = [](const wire::Vec3& v) {
    const double n = std::sqrt(double(v.x()) * v.x() + double(v.y()) * v.y() + double(v.z()) * v.z());
    return std::array<double, 3>{v.x() / n, v.y() / n, v.z() / n};
  };
  const auto da = unit(a.direction()), db = unit(b.direction());
  if (da[0] * db[0] + da[1] * db[1] + da[2] * db[2] < kSunDirectionTolerance) return false;
  const float ia[] = {a.irradiance().x(), a.irradiance().y(), a.irradiance().z()};
  const float ib[] = {b.irradiance().x(), b.irradiance().y(), b.irradiance().z()};
  for (int i = 0; i < 3; ++i)
    if (std::fabs(ia[i] - ib[i]) > kSunIrradianceTolerance * std::max({ia[i], ib[i], 1e-3f})) return false;
  return true;
}

}  // namespace

void LiveSession::place(const Place& p) {
  aux_.set_shadow_catcher_height(p.floor[1]);
  frame_options_changed();
}

void LiveSession::light(const Light& l) {
  if (!l.sun) {
    if (!sun_) return;
    sun_.reset();
  } else {
    wire::SunOverride sun;
    *sun.mutable_direction() = wire_vec3(l.sun->direction);
    *sun.mutable_irradiance() = wire_vec3(l.sun->irradiance);
    if (sun_ && same_sun(*sun_, sun)) return;
    sun_ = sun;
  }
  frame_options_changed();
}

}  // namespace tessera::master::live
