/* OpenCL entry points that keep a `pathtrace` tile pair's sums on the device (Algorithm 1 and
 * Algorithm 5 lines 9-14 of Kim & Sung 2021): launches are added where they were traced and only
 * the resolved RGBA8 pixels travel back to the host. One work item per pixel and eye, pixels of
 * both eyes in a row (eye-major, tile rows top to bottom), work groups of TS_PT_GROUP items. */
#include "kernels/integrators/pathtrace_accumulate.h"

#define TS_PT_GROUP 64

/* Sums each work item's TS_PT_TOTALS counters over its work group into
 * partials[group * TS_PT_TOTALS + k] (integers: the host adds the groups in any order). */
inline void pt_group_totals(const uint* mine, __local uint* scratch, __global uint* partials) {
  uint lid = get_local_id(0), k, stride;
  for (k = 0u; k < TS_PT_TOTALS; ++k) scratch[lid * TS_PT_TOTALS + k] = mine[k];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (stride = TS_PT_GROUP / 2u; stride > 0u; stride >>= 1) {
    if (lid < stride)
      for (k = 0u; k < TS_PT_TOTALS; ++k) scratch[lid * TS_PT_TOTALS + k] += scratch[(lid + stride) * TS_PT_TOTALS + k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0u)
    for (k = 0u; k < TS_PT_TOTALS; ++k) partials[get_group_id(0) * TS_PT_TOTALS + k] = scratch[k];
}

/* sums += one launch's (or one uploaded batch's) own sums and reprojected float4s, read from index
 * `first` on (a tile of a batch); its counters go to partials from group `first_group` on. */
__kernel __attribute__((reqd_work_group_size(TS_PT_GROUP, 1, 1))) void pathtrace_merge(
    __global PtPixelAccum* sums, __global const PtPixelOut* own, __global const float* reproj, const uint count,
    const uint first, __global uint* partials, const uint first_group) {
  __local uint scratch[TS_PT_GROUP * TS_PT_TOTALS];
  uint i = get_global_id(0);
  uint totals[TS_PT_TOTALS] = {0u, 0u, 0u, 0u};
  if (i < count) pt_accumulate(sums + i, own + first + i, reproj + 4u * (first + i), totals);
  pt_group_totals(totals, scratch, partials + first_group * TS_PT_TOTALS);
}

/* The mean of every pixel (the median reads its neighbours' means), written from pixel `first` on. */
__kernel void pathtrace_mean(__global const PtPixelAccum* sums, const uint count, __global float* mean, const uint first) {
  uint i = get_global_id(0);
  float3 m;
  if (i >= count) return;
  m = pt_accum_mean(sums + i);
  mean[3u * (first + i)] = m.x;
  mean[3u * (first + i) + 1u] = m.y;
  mean[3u * (first + i) + 2u] = m.z;
}

/* Resolved linear radiance and RGBA8 words of every pixel, from pixel `first` on in mean, linear and
 * rgba (a tile of a batch); partials count the median pixels (counter 0 of each group, from group
 * `first_group` on). thresholds: the exact linear-to-sRGB table (255 floats). */
__kernel __attribute__((reqd_work_group_size(TS_PT_GROUP, 1, 1))) void pathtrace_resolve(
    __global const PtPixelAccum* sums, __global const float* mean, const PtResolveParams rp,
    __global const float* thresholds, __global float* linear, __global uint* rgba, const uint first,
    __global uint* partials, const uint first_group) {
  __local uint scratch[TS_PT_GROUP * TS_PT_TOTALS];
  uint n = rp.width * rp.height, i = get_global_id(0);
  uint totals[TS_PT_TOTALS] = {0u, 0u, 0u, 0u};
  if (i < n * rp.eye_count) {
    uint eye = i / n, j = i - eye * n, y = j / rp.width, x = j - y * rp.width, o = first + i;
    ColorTables tables;
    float3 c = pt_resolve_pixel(sums + i, mean + 3u * (first + eye * n), &rp, x, y);
    tables.srgb_to_linear = thresholds; /* not used by the encoding */
    tables.linear_to_srgb_threshold = thresholds;
    linear[3u * o] = c.x;
    linear[3u * o + 1u] = c.y;
    linear[3u * o + 2u] = c.z;
    rgba[o] = pt_encode_rgba8(&tables, c, rp.exposure);
    totals[0] = pt_accum_median_wanted(sums + i, &rp) ? 1u : 0u;
  }
  pt_group_totals(totals, scratch, partials + first_group * TS_PT_TOTALS);
}
