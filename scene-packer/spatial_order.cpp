#include "scene-packer/spatial_order.h"

#include <algorithm>
#include <array>
#include <limits>

namespace tessera::pack {
namespace {

// Spreads the low 10 bits of v so that two zero bits follow each one.
uint32_t spread_bits(uint32_t v) {
  v &= 0x3FFu;
  v = (v | (v << 16)) & 0x030000FFu;
  v = (v | (v << 8)) & 0x0300F00Fu;
  v = (v | (v << 4)) & 0x030C30C3u;
  v = (v | (v << 2)) & 0x09249249u;
  return v;
}

}  // namespace

std::vector<uint32_t> centroid_morton_codes(const std::vector<float>& positions, const std::vector<uint32_t>& triangles,
                                            const std::vector<uint32_t>& which) {
  std::array<float, 3> lo{}, hi{};
  lo.fill(std::numeric_limits<float>::max());
  hi.fill(std::numeric_limits<float>::lowest());
  for (size_t i = 0; i < positions.size(); i += 3)
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], positions[i + a]);
      hi[a] = std::max(hi[a], positions[i + a]);
    }
  std::array<double, 3> scale{};
  for (int a = 0; a < 3; ++a) scale[a] = hi[a] > lo[a] ? 1023.0 / (double(hi[a]) - lo[a]) : 0.0;
  std::vector<uint32_t> codes;
  codes.reserve(which.size());
  for (uint32_t t : which) {
    uint32_t code = 0;
    for (int a = 0; a < 3; ++a) {
      double c = 0.0;
      for (int k = 0; k < 3; ++k) c += positions[3 * size_t(triangles[3 * size_t(t) + k]) + a];
      const double cell = (c / 3.0 - lo[a]) * scale[a];
      code |= spread_bits(uint32_t(std::clamp(cell, 0.0, 1023.0))) << a;
    }
    codes.push_back(code);
  }
  return codes;
}

}  // namespace tessera::pack
