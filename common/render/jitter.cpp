#include "common/render/jitter.h"

#include <cmath>

namespace tessera {
namespace {

// The plastic number's powers: R2's generator, g^3 = g + 1.
constexpr double kPlastic = 1.32471795724474602596;
constexpr double kStepX = 1.0 / kPlastic;
constexpr double kStepY = 1.0 / (kPlastic * kPlastic);

float centred_fraction(double value) {
  // Seeded at 0.5 so sample 0 lands on the centre; the float is kept strictly inside the pixel
  // (a fraction just below 1 would otherwise round to +0.5, the neighbour's edge).
  const double f = value - std::floor(value) - 0.5;
  const float limit = std::nextafter(0.5f, 0.0f);
  return std::fmax(-limit, std::fmin(limit, float(f)));
}

}  // namespace

std::array<float, 2> jitter_offset(uint32_t sample_index) {
  if (sample_index == 0) return {0.0f, 0.0f};
  const double k = double(sample_index);
  return {centred_fraction(0.5 + k * kStepX), centred_fraction(0.5 + k * kStepY)};
}

CameraParams jittered_camera(const CameraParams& camera, std::array<float, 2> offset) {
  if (offset[0] == 0.0f && offset[1] == 0.0f) return camera;
  CameraParams c = camera;
  const float dx = (camera.right - camera.left) * (offset[0] / float(camera.width));
  const float dy = (camera.top - camera.bottom) * (offset[1] / float(camera.height));
  c.left = camera.left + dx;
  c.right = camera.right + dx;
  c.top = camera.top - dy;  // image y grows downwards
  c.bottom = camera.bottom - dy;
  return c;
}

}  // namespace tessera
