#include "scene-packer/triangle_order.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessera::pack {
namespace {

// The 21 low bits of v spread to every third bit.
uint64_t spread_bits(uint64_t v) {
  v &= 0x1FFFFF;
  v = (v | v << 32) & 0x1F00000000FFFFull;
  v = (v | v << 16) & 0x1F0000FF0000FFull;
  v = (v | v << 8) & 0x100F00F00F00F00Full;
  v = (v | v << 4) & 0x10C30C30C30C30C3ull;
  v = (v | v << 2) & 0x1249249249249249ull;
  return v;
}

// The 63-bit Morton code of a point's cell in a 2^21 grid over [lo, hi] on each axis (clamped).
uint64_t morton_code(const float p[3], const float lo[3], const float hi[3]) {
  uint64_t code = 0;
  for (int a = 0; a < 3; ++a) {
    const float extent = hi[a] - lo[a];
    const double f = extent > 0.0f ? double(p[a] - lo[a]) / double(extent) : 0.0;
    const uint64_t cell = uint64_t(std::clamp(f, 0.0, 1.0) * double((1 << 21) - 1));
    code |= spread_bits(cell) << a;
  }
  return code;
}

}  // namespace

void order_triangles(const TriangleMesh& mesh, const std::vector<uint32_t>& object_of, std::vector<uint32_t>& triangles) {
  float lo[3], hi[3];
  std::fill(lo, lo + 3, std::numeric_limits<float>::max());
  std::fill(hi, hi + 3, std::numeric_limits<float>::lowest());
  std::vector<float> centroids(3 * triangles.size());
  for (size_t i = 0; i < triangles.size(); ++i) {
    const uint32_t* tri = &mesh.triangles[3 * size_t(triangles[i])];
    for (int a = 0; a < 3; ++a) {
      const float c = (mesh.positions[3 * size_t(tri[0]) + a] + mesh.positions[3 * size_t(tri[1]) + a] +
                       mesh.positions[3 * size_t(tri[2]) + a]) / 3.0f;
      centroids[3 * i + a] = c;
      lo[a] = std::min(lo[a], c);
      hi[a] = std::max(hi[a], c);
    }
  }
  struct Key {
    uint32_t object, material;
    uint64_t morton;
    uint32_t triangle;
  };
  std::vector<Key> keys(triangles.size());
  for (size_t i = 0; i < triangles.size(); ++i) {
    const uint32_t t = triangles[i];
    keys[i] = {object_of.empty() ? 0u : object_of[t], mesh.triangle_materials[t], morton_code(&centroids[3 * i], lo, hi), t};
  }
  std::stable_sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.object != b.object) return a.object < b.object;
    if (a.material != b.material) return a.material < b.material;
    return a.morton < b.morton;
  });
  for (size_t i = 0; i < keys.size(); ++i) triangles[i] = keys[i].triangle;
}

}  // namespace tessera::pack
