/* Progressive per-pixel sums of a stereo tile pair in the `pathtrace` mode (Algorithm 1 of Kim &
 * Sung 2021) and their resolve into pixels (Algorithm 5 lines 9-14). The same code adds launches
 * and resolves tiles on the host (worker/render/pathtrace_accumulation.cpp) and on an OpenCL
 * device (kernels/device/opencl/pathtrace_accumulate.cl), so both give the same bits. */
#ifndef TESSERA_KERNELS_INTEGRATORS_PATHTRACE_ACCUMULATE_H
#define TESSERA_KERNELS_INTEGRATORS_PATHTRACE_ACCUMULATE_H
#include "kernels/integrators/pathtrace_params.h"
#include "kernels/integrators/pathtrace_resolve.h"
#include "kernels/shading/color.h"

/* Everything a pixel of one eye has gathered since the tile's last reset. 40 bytes. */
typedef struct PtPixelAccum {
  float own_r, own_g, own_b; /* the pixel's own samples */
  float rep_r, rep_g, rep_b; /* samples the other eye sent here (reprojection) */
  uint own_n, stopped, specular;
  float rep_n;
} PtPixelAccum;

/* Counters of one added batch (integers, so any order of adding them gives the same totals). */
#define TS_PT_TOTAL_OWN 0u
#define TS_PT_TOTAL_REPROJECTED 1u
#define TS_PT_TOTAL_SEGMENTS 2u
#define TS_PT_TOTAL_STOPPED 3u
#define TS_PT_TOTALS 4u

/* How a tile resolves (ResolveOptions on the host). */
typedef struct PtResolveParams {
  uint width, height;       /* the tile, per eye */
  uint eye_count;
  uint median;              /* §3.4 noise removal on */
  uint median_max_samples;  /* ... for pixels holding at most this many own samples */
  float exposure;
  uint pad0, pad1;
} PtResolveParams;

/* Adds one launch's output of a pixel (own sums and the float4 the other eye sent) to its sums;
 * writes the pixel's share of the batch counters to totals[TS_PT_TOTALS]. */
TS_FN void pt_accumulate(TS_GLOBAL PtPixelAccum* p, TS_GLOBAL const PtPixelOut* o, TS_GLOBAL const float* reproj,
                         uint* totals) {
  p->own_r += o->r;
  p->own_g += o->g;
  p->own_b += o->b;
  p->own_n += o->samples;
  p->stopped += o->stopped;
  p->specular += o->specular;
  p->rep_r += reproj[0];
  p->rep_g += reproj[1];
  p->rep_b += reproj[2];
  p->rep_n += reproj[3];
  totals[TS_PT_TOTAL_OWN] = o->samples;
  totals[TS_PT_TOTAL_REPROJECTED] = (uint)(reproj[3] + 0.5f);
  totals[TS_PT_TOTAL_SEGMENTS] = o->segments;
  totals[TS_PT_TOTAL_STOPPED] = o->stopped;
}

/* Mean linear radiance of a pixel over its own and reprojected samples. */
TS_FN float3 pt_accum_mean(TS_GLOBAL const PtPixelAccum* p) {
  return pt_pixel_mean(make_float3(p->own_r, p->own_g, p->own_b), (float)p->own_n,
                       make_float3(p->rep_r, p->rep_g, p->rep_b), p->rep_n);
}

TS_FN int pt_accum_median_wanted(TS_GLOBAL const PtPixelAccum* p, const PtResolveParams* rp) {
  return rp->median && pt_median_wanted(p->own_n, p->stopped, p->specular, rp->median_max_samples);
}

/* The resolved linear radiance of pixel (x, y) of one eye: its mean, or the median of its
 * neighbours' means where §3.4 says so. mean: the eye's means, rgb per pixel, tile rows. */
TS_FN float3 pt_resolve_pixel(TS_GLOBAL const PtPixelAccum* p, TS_GLOBAL const float* mean, const PtResolveParams* rp,
                              uint x, uint y) {
  TS_GLOBAL const float* m;
  if (pt_accum_median_wanted(p, rp)) return pt_median8(mean, rp->width, rp->height, x, y);
  m = mean + 3u * (y * rp->width + x);
  return make_float3(m[0], m[1], m[2]);
}

/* A resolved pixel as it travels: exposure, then sRGB 8-bit by the exact threshold table. */
TS_FN uint pt_encode_rgba8(const ColorTables* tables, float3 rgb, float exposure) {
  return pack_rgba8(tables, make_float3(rgb.x * exposure, rgb.y * exposure, rgb.z * exposure));
}

#endif
