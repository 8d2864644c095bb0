#include "common/image/srgb_thresholds.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/image/image.h"

namespace tessera {
namespace {

uint8_t linear_to_srgb8_exact(float linear) {
  return static_cast<uint8_t>(std::lround(linear_to_srgb(double(linear)) * 255.0));
}

}  // namespace

// thresholds[c]: the smallest positive float that encodes to code c + 1 or more, found by
// bisection over float bit patterns so the table reproduces linear_to_srgb8_exact bit for bit
// (a frame's worth of pow() calls cost more than the frame's resolve otherwise).
const std::array<float, 255>& linear_to_srgb8_thresholds() {
  static const std::array<float, 255> table = [] {
    std::array<float, 255> t{};
    for (int c = 0; c < 255; ++c) {
      uint32_t lo = 0, hi = 0x3F800000u;  // bit patterns of 0 and 1.0f (1.0f encodes to 255)
      while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        float x;
        std::memcpy(&x, &mid, sizeof x);
        if (linear_to_srgb8_exact(x) >= c + 1) hi = mid;
        else lo = mid + 1;
      }
      std::memcpy(&t[c], &lo, sizeof lo);
    }
    return t;
  }();
  return table;
}

}  // namespace tessera
