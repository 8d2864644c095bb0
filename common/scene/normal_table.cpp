#include "common/scene/normal_table.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/base/compat.h"
#include <numbers>

namespace tessera {

namespace {

// Round-to-nearest-even float -> IEEE half, for values in [-1, 1].
uint16_t float_to_half(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  const float a = std::fabs(value);
  if (a < 6.103515625e-5f) {  // subnormal half: steps of 2^-24
    return uint16_t(sign | uint16_t(std::nearbyint(a * 16777216.0f)));
  }
  int exponent;
  const float m = std::frexp(a, &exponent);  // a = m * 2^exponent, m in [0.5, 1)
  // 11 significant bits: m * 2^11 in [1024, 2048)
  uint32_t significand = uint32_t(std::nearbyint(m * 2048.0f));
  if (significand == 2048) {
    significand = 1024;
    ++exponent;
  }
  const uint32_t half_exponent = uint32_t(exponent - 1 + 15);
  return uint16_t(sign | (half_exponent << 10) | (significand - 1024));
}

}  // namespace

const std::vector<uint16_t>& normal_table_half() {
  static const std::vector<uint16_t> table = [] {
    std::vector<uint16_t> t(3 * kNormalTableSize);
    const double golden_angle = 2.0 * std::numbers::pi * (1.0 - 1.0 / std::numbers::phi);
    for (uint32_t i = 0; i < kNormalTableSize; ++i) {
      const double z = 1.0 - (2.0 * i + 1.0) / kNormalTableSize;
      const double r = std::sqrt(std::max(0.0, 1.0 - z * z));
      const double phi = golden_angle * i;
      t[3 * i] = float_to_half(static_cast<float>(r * std::cos(phi)));
      t[3 * i + 1] = float_to_half(static_cast<float>(r * std::sin(phi)));
      t[3 * i + 2] = float_to_half(static_cast<float>(z));
    }
    return t;
  }();
  return table;
}

const std::vector<float>& normal_table() {
  static const std::vector<float> table = [] {
    const auto& half = normal_table_half();
    std::vector<float> t(half.size());
    for (size_t i = 0; i < half.size(); ++i) t[i] = ts_half_bits_to_float(half[i]);
    return t;
  }();
  return table;
}

int NormalEncoder::cell_of(float x) const {
  return std::clamp(static_cast<int>((x + 1.0f) * 0.5f * kGrid), 0, kGrid - 1);
}

NormalEncoder::NormalEncoder() {
  // Bucket the table entries in a coarse grid; a cell (1/24 wide) is far wider than the largest
  // distance from any unit vector to its nearest entry (~0.009), so searching the 27 cells
  // around a query always finds the true nearest entry.
  const auto& t = normal_table();
  const int cells = kGrid * kGrid * kGrid;
  std::vector<uint32_t> cell_of_entry(kNormalTableSize);
  std::vector<uint32_t> counts(cells + 1, 0);
  for (uint32_t i = 0; i < kNormalTableSize; ++i) {
    const int c = (cell_of(t[3 * i]) * kGrid + cell_of(t[3 * i + 1])) * kGrid + cell_of(t[3 * i + 2]);
    cell_of_entry[i] = c;
    ++counts[c + 1];
  }
  for (int c = 0; c < cells; ++c) counts[c + 1] += counts[c];
  cell_start_ = counts;
  entries_.resize(kNormalTableSize);
  std::vector<uint32_t> fill(counts.begin(), counts.end() - 1);
  for (uint32_t i = 0; i < kNormalTableSize; ++i) entries_[fill[cell_of_entry[i]]++] = static_cast<uint16_t>(i);
  inverse_length_.resize(kNormalTableSize);
  for (uint32_t i = 0; i < kNormalTableSize; ++i)
    inverse_length_[i] = 1.0 / std::sqrt(double(t[3 * i]) * t[3 * i] + double(t[3 * i + 1]) * t[3 * i + 1] +
                                         double(t[3 * i + 2]) * t[3 * i + 2]);
}

uint16_t NormalEncoder::encode(const std::array<float, 3>& n) const {
  const auto& t = normal_table();
  const int cx = cell_of(n[0]), cy = cell_of(n[1]), cz = cell_of(n[2]);
  double best_dot = -2.0;
  uint16_t best = 0;
  for (int x = std::max(cx - 1, 0); x <= std::min(cx + 1, kGrid - 1); ++x)
    for (int y = std::max(cy - 1, 0); y <= std::min(cy + 1, kGrid - 1); ++y)
      for (int z = std::max(cz - 1, 0); z <= std::min(cz + 1, kGrid - 1); ++z) {
        const int c = (x * kGrid + y) * kGrid + z;
        for (uint32_t e = cell_start_[c]; e < cell_start_[c + 1]; ++e) {
          const uint16_t i = entries_[e];
          // cosine of the angle: half rounding leaves entries off unit length by up to 2^-11
          const double d = (double(n[0]) * t[3 * i] + double(n[1]) * t[3 * i + 1] + double(n[2]) * t[3 * i + 2]) *
                           inverse_length_[i];
          if (d > best_dot || (d == best_dot && i < best)) {
            best_dot = d;
            best = i;
          }
        }
      }
  return best;
}

}  // namespace tessera
