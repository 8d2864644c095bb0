#include "common/render/sun_override.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/base/error.h"

namespace tessera {

SunOverride checked_sun_override(const std::array<float, 3>& direction, const std::array<float, 3>& irradiance) {
  for (float v : direction)
    if (!std::isfinite(v)) throw Error("sun direction is not finite");
  const double len = std::sqrt(double(direction[0]) * direction[0] + double(direction[1]) * direction[1] +
                               double(direction[2]) * direction[2]);
  if (!(len > 1e-20)) throw Error("sun direction is zero");
  for (float v : irradiance)
    if (!(v >= 0.0f && v <= kMaxSunIrradiance))
      throw Error("sun irradiance component " + std::to_string(v) + " outside [0, 1e4]");
  SunOverride sun;
  for (int i = 0; i < 3; ++i) sun.direction[size_t(i)] = float(direction[size_t(i)] / len);
  sun.irradiance = irradiance;
  return sun;
}

namespace {

// The light to replace: the first directional one, else a new one at the end.
template <typename Light>
std::vector<Light> with_sun(std::span<const Light> lights, const std::optional<SunOverride>& sun, uint32_t directional) {
  std::vector<Light> out(lights.begin(), lights.end());
  if (!sun) return out;
  auto it = std::find_if(out.begin(), out.end(), [&](const Light& l) { return l.type == directional; });
  if (it == out.end()) {
    out.push_back(Light{});
    it = out.end() - 1;
    it->type = directional;
  }
  it->x = sun->direction[0];
  it->y = sun->direction[1];
  it->z = sun->direction[2];
  it->r = sun->irradiance[0];
  it->g = sun->irradiance[1];
  it->b = sun->irradiance[2];
  return out;
}

}  // namespace

std::vector<LightGpu> lights_with_sun(std::span<const LightGpu> lights, const std::optional<SunOverride>& sun) {
  return with_sun(lights, sun, TS_LIGHT_DIRECTIONAL);
}

std::vector<VctLight> vct_lights_with_sun(std::span<const VctLight> lights, const std::optional<SunOverride>& sun) {
  return with_sun(lights, sun, TS_VCT_LIGHT_DIRECTIONAL);
}

}  // namespace tessera
