#pragma once
// The table of unit normals that 16-bit normal indices point into. Seo et al. fill theirs with
// Smith et al.'s optimized spherical coordinates; we use a spherical Fibonacci lattice of 65,536
// points: near-uniform spacing, so the worst-case angular error is close to the best any 16-bit
// table can reach (measured in tests/test_quantization.cpp). The table is not stored in the
// .tpk: packer and loader regenerate it from its name.
#include <array>
#include <cstdint>
#include <vector>

namespace tessera {

inline constexpr const char* kNormalTableName = "spherical-fibonacci-65536";
inline constexpr uint32_t kNormalTableSize = 65536;

// xyz per entry as IEEE half floats: what device memory holds (half the bytes of floats; the
// rounding, under 0.03 degrees, is far below the table's own spacing).
const std::vector<uint16_t>& normal_table_half();
// The same entries as floats (exactly the half values, so encoder and decoder agree).
const std::vector<float>& normal_table();

// Index of the table entry closest in angle to the unit vector n.
class NormalEncoder {
 public:
  NormalEncoder();
  uint16_t encode(const std::array<float, 3>& n) const;

 private:
  static constexpr int kGrid = 48;  // cells per axis over [-1, 1]^3
  int cell_of(float x) const;
  std::vector<uint32_t> cell_start_;  // kGrid^3 + 1 offsets into entries_
  std::vector<uint16_t> entries_;
  std::vector<double> inverse_length_;
};

}  // namespace tessera
