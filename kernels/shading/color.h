/* sRGB <-> linear through tables the host computes once, so every backend converts identically
 * (transcendental functions differ by an ulp between OpenCL implementations and libm). */
#ifndef TESSERA_KERNELS_SHADING_COLOR_H
#define TESSERA_KERNELS_SHADING_COLOR_H
#include "kernels/base/vec.h"

/* srgb_to_linear[i]: linear value of 8-bit sRGB code i.
 * linear_to_srgb_threshold[i], i = 0..254: smallest linear value that encodes to code i + 1. */
typedef struct ColorTables {
  TS_GLOBAL const float* srgb_to_linear;
  TS_GLOBAL const float* linear_to_srgb_threshold;
} ColorTables;

TS_FN uint linear_to_srgb8(const ColorTables* t, float x) {
  /* binary search over 255 thresholds: exact rounding of the sRGB curve */
  uint lo = 0u, hi = 255u;
  if (!(x > 0.0f)) return 0u;
  while (lo < hi) {
    uint mid = (lo + hi) >> 1;
    if (x >= t->linear_to_srgb_threshold[mid]) lo = mid + 1u;
    else hi = mid;
  }
  return lo;
}

TS_FN uint pack_rgba8(const ColorTables* t, float3 c) {
  return linear_to_srgb8(t, c.x) | (linear_to_srgb8(t, c.y) << 8) | (linear_to_srgb8(t, c.z) << 16) | 0xFF000000u;
}

#endif
