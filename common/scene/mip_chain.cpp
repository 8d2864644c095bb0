#include "common/scene/mip_chain.h"

#include <algorithm>
#include <cmath>

#include "common/image/image.h"

namespace tessera {
namespace {

// Source rows (or columns) that output row i of a halved side of length n gathers: 2i and 2i + 1,
// the last output also the odd last source row.
void source_span(uint32_t i, uint32_t n, uint32_t& first, uint32_t& count) {
  const uint32_t half = std::max(1u, n / 2);
  first = std::min(2 * i, n - 1);
  count = std::min(2u, n - first);
  if (i == half - 1 && n > 1 && (n & 1u)) count = n - first;
}

// Share of texels whose alpha, multiplied by `scale`, passes the kernels' cut-out test (>= 0.5).
double coverage(const std::vector<uint8_t>& rgba, double scale) {
  size_t passing = 0, n = rgba.size() / 4;
  for (size_t i = 0; i < n; ++i) passing += std::min(255.0, std::round(rgba[4 * i + 3] * scale)) >= 128.0;
  return n ? double(passing) / double(n) : 0.0;
}

// The texels of `level` with alpha rescaled so that coverage() matches `target`.
std::vector<uint8_t> with_coverage(const std::vector<uint8_t>& level, double target) {
  double lo = 0.0, hi = 255.0;  // coverage grows with the scale; scale 255 passes every non-zero alpha
  for (int i = 0; i < 24; ++i) {
    const double mid = 0.5 * (lo + hi);
    (coverage(level, mid) < target ? lo : hi) = mid;
  }
  const double scale = std::fabs(coverage(level, lo) - target) < std::fabs(coverage(level, hi) - target) ? lo : hi;
  std::vector<uint8_t> out = level;
  for (size_t i = 3; i < out.size(); i += 4) out[i] = uint8_t(std::min(255.0, std::round(out[i] * scale)));
  return out;
}

}  // namespace

uint32_t full_mip_levels(uint32_t width, uint32_t height) {
  uint32_t levels = 1;
  for (uint32_t side = std::max(width, height); side > 1; side >>= 1) ++levels;
  return levels;
}

uint32_t stored_mip_levels(uint32_t width, uint32_t height) {
  const uint64_t budget = uint64_t(width) * height + uint64_t(width) * height / 3;
  uint32_t levels = 1;
  while (levels < full_mip_levels(width, height) && mip_chain_texels(width, height, levels + 1) <= budget) ++levels;
  return levels;
}

uint64_t mip_chain_texels(uint32_t width, uint32_t height, uint32_t levels) {
  if (width == 0 || height == 0) return 0;
  uint64_t texels = 0;
  for (uint32_t k = 0; k < levels && k < 32; ++k) texels += uint64_t(std::max(1u, width >> k)) * std::max(1u, height >> k);
  return texels;
}

TextureImage half_size(const TextureImage& t) {
  TextureImage out;
  out.name = t.name;
  out.has_alpha_mask = t.has_alpha_mask;
  out.width = std::max(1u, t.width / 2);
  out.height = std::max(1u, t.height / 2);
  out.rgba.resize(size_t(out.width) * out.height * 4);
  for (uint32_t y = 0; y < out.height; ++y) {
    uint32_t y0, ny;
    source_span(y, t.height, y0, ny);
    for (uint32_t x = 0; x < out.width; ++x) {
      uint32_t x0, nx;
      source_span(x, t.width, x0, nx);
      double color[3] = {0, 0, 0}, weighted[3] = {0, 0, 0}, alpha = 0;
      for (uint32_t sy = y0; sy < y0 + ny; ++sy)
        for (uint32_t sx = x0; sx < x0 + nx; ++sx) {
          const uint8_t* p = &t.rgba[(size_t(sy) * t.width + sx) * 4];
          const double a = p[3] / 255.0;
          for (int c = 0; c < 3; ++c) {
            color[c] += srgb8_to_linear(p[c]);
            weighted[c] += a * srgb8_to_linear(p[c]);
          }
          alpha += a;
        }
      const double n = double(nx * ny);
      uint8_t* o = &out.rgba[(size_t(y) * out.width + x) * 4];
      for (int c = 0; c < 3; ++c)
        o[c] = linear_to_srgb8(float(t.has_alpha_mask && alpha > 0 ? weighted[c] / alpha : color[c] / n));
      o[3] = uint8_t(std::lround(255.0 * alpha / n));
    }
  }
  return out;
}

std::vector<uint8_t> build_mip_chain(const TextureImage& texture) {
  std::vector<uint8_t> chain = texture.rgba;
  const uint32_t levels = stored_mip_levels(texture.width, texture.height);
  const double level0_coverage = texture.has_alpha_mask ? coverage(texture.rgba, 1.0) : 0.0;
  TextureImage level = texture;
  for (uint32_t k = 1; k < levels; ++k) {
    level = half_size(level);
    const std::vector<uint8_t> stored = texture.has_alpha_mask ? with_coverage(level.rgba, level0_coverage) : level.rgba;
    chain.insert(chain.end(), stored.begin(), stored.end());
  }
  return chain;
}

}  // namespace tessera
