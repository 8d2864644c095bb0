#include "common/render/jitter.h"

#include <cmath>

namespace tessera {
namespace {

// Van der Corput radical inverse of `index` in `base`: the digits mirrored about the point.
double radical_inverse(uint32_t index, uint32_t base) {
  double result = 0.0, digit_weight = 1.0;
  while (index > 0) {
    digit_weight /= base;
    result += digit_weight * double(index % base);
    index /= base;
  }
  return result;
}

// A point in (0, 1) as an offset from the pixel centre, kept strictly inside the pixel (a point
// within 2^-25 of 1 would otherwise round to +0.5, the neighbour's edge, as a float).
float centred(double point) {
  const float limit = std::nextafter(0.5f, 0.0f);
  return std::fmax(-limit, std::fmin(limit, float(point - 0.5)));
}

}  // namespace

std::array<float, 2> jitter_offset(uint32_t sample_index) {
  if (sample_index == 0) return {0.0f, 0.0f};
  return {centred(radical_inverse(sample_index, 2)), centred(radical_inverse(sample_index, 3))};
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
