/* Turning a tile's accumulated samples into pixels (Algorithm 5 lines 9-14): the mean of the
 * pixel's own and reprojected samples, and the noise removal of §3.4 — a median over the 8
 * neighbours for pixels whose paths stopped early and whose primary hit is not a mirror or glass
 * (caustics and reflections must stay sharp). Neighbours outside the tile are not available to a
 * tile rendered alone, so edge pixels take the median of the neighbours inside it. */
#ifndef TESSERA_KERNELS_INTEGRATORS_PATHTRACE_RESOLVE_H
#define TESSERA_KERNELS_INTEGRATORS_PATHTRACE_RESOLVE_H
#include "kernels/base/vec.h"

/* Mean radiance of a pixel from own sums (rgb, n) and reprojected sums (rgb, n). */
TS_FN float3 pt_pixel_mean(float3 own, float own_n, float3 rep, float rep_n) {
  float n = own_n + rep_n;
  if (!(n > 0.0f)) return make_float3(0.0f, 0.0f, 0.0f);
  return v3_scale(v3_add(own, rep), 1.0f / n);
}

/* §3.4: filter a pixel when most of its own samples stopped early, none hit a mirror or glass
 * first, and it holds at most max_samples own samples (the filter is for the first, noisy
 * frames; a converging pixel no longer needs it, and keeping it would blur the converged image). */
TS_FN int pt_median_wanted(uint samples, uint stopped, uint specular, uint max_samples) {
  return samples > 0u && samples <= max_samples && specular == 0u && 2u * stopped >= samples && stopped > 0u;
}

/* Median of n values (n <= 8), sorted in place. For even n the mean of the middle two. */
TS_FN float pt_median_of(float* v, uint n) {
  uint i, j;
  for (i = 1u; i < n; ++i) {
    float x = v[i];
    j = i;
    while (j > 0u && v[j - 1u] > x) {
      v[j] = v[j - 1u];
      --j;
    }
    v[j] = x;
  }
  if (n == 0u) return 0.0f;
  return (n & 1u) ? v[n / 2u] : 0.5f * (v[n / 2u - 1u] + v[n / 2u]);
}

/* Per-channel median of the 8 neighbours of (x, y) inside a w x h image of linear rgb triples. */
TS_FN float3 pt_median8(TS_GLOBAL const float* rgb, uint w, uint h, uint x, uint y) {
  float r[8], g[8], b[8];
  uint n = 0u;
  int dx, dy;
  for (dy = -1; dy <= 1; ++dy)
    for (dx = -1; dx <= 1; ++dx) {
      int nx = (int)x + dx, ny = (int)y + dy;
      TS_GLOBAL const float* p;
      if ((dx == 0 && dy == 0) || nx < 0 || ny < 0 || nx >= (int)w || ny >= (int)h) continue;
      p = rgb + 3u * ((uint)ny * w + (uint)nx);
      r[n] = p[0];
      g[n] = p[1];
      b[n] = p[2];
      ++n;
    }
  if (n == 0u) {
    TS_GLOBAL const float* p = rgb + 3u * (y * w + x);
    return make_float3(p[0], p[1], p[2]);
  }
  return make_float3(pt_median_of(r, n), pt_median_of(g, n), pt_median_of(b, n));
}

#endif
