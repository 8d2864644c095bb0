#include "common/scene/normal_table.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace tessera {

const std::vector<float>& normal_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(3 * kNormalTableSize);
    const double golden_angle = 2.0 * std::numbers::pi * (1.0 - 1.0 / std::numbers::phi);
    for (uint32_t i = 0; i < kNormalTableSize; ++i) {
      const double z = 1.0 - (2.0 * i + 1.0) / kNormalTableSize;
      const double r = std::sqrt(std::max(0.0, 1.0 - z * z));
      const double phi = golden_angle * i;
      t[3 * i] = static_cast<float>(r * std::cos(phi));
      t[3 * i + 1] = static_cast<float>(r * std::sin(phi));
      t[3 * i + 2] = static_cast<float>(z);
    }
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
          const double d = double(n[0]) * t[3 * i] + double(n[1]) * t[3 * i + 1] + double(n[2]) * t[3 * i + 2];
          if (d > best_dot || (d == best_dot && i < best)) {
            best_dot = d;
            best = i;
          }
        }
      }
  return best;
}

}  // namespace tessera
