#pragma once
// The scene's sun replaced for a frame (FrameRequest.sun, tessera-render --sun; AR light
// estimation): the first directional light takes the given direction and irradiance, and a scene
// without one gets it added, in the lights of every mode (raytrace and pathtrace: LightGpu, vct:
// VctLight).
#include <array>
#include <optional>
#include <span>
#include <vector>

#include "kernels/shading/lights.h"
#include "kernels/vct/vct_light.h"

namespace tessera {

struct SunOverride {
  std::array<float, 3> direction{};   // where the light travels, unit length
  std::array<float, 3> irradiance{};  // linear RGB on a surface facing it
  friend bool operator==(const SunOverride&, const SunOverride&) = default;
};

inline constexpr float kMaxSunIrradiance = 1e4f;

// `direction` normalised. Throws Error on a value that is not finite, a zero direction or an
// irradiance component outside [0, kMaxSunIrradiance].
SunOverride checked_sun_override(const std::array<float, 3>& direction, const std::array<float, 3>& irradiance);

// `lights` with the sun replaced (none: unchanged).
std::vector<LightGpu> lights_with_sun(std::span<const LightGpu> lights, const std::optional<SunOverride>& sun);
std::vector<VctLight> vct_lights_with_sun(std::span<const VctLight> lights, const std::optional<SunOverride>& sun);

}  // namespace tessera
