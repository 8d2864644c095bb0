/* Voxel cone tracing (the `vct` mode, papers/001 ch. 4): the sparse voxel grid as the kernels see it,
 * its word encodings, and the small set of atomics and bit operations the build needs.
 *
 * Layout. Every mip level l (resolution N >> l, l = 0 .. log2 N) is a sparse set of 4x4x4 bricks:
 *   map[map_offset[l] + cell]   brick index + 1 of a brick cell, 0 where the whole brick is empty
 *                               (a dense array of (N >> l) / 4 cubed 32-bit words per level)
 *   bricks[b] = (mask_lo, mask_hi, first_voxel, cell)
 *                               64-bit occupancy mask of the brick's voxels (bit = z*16 + y*4 + x)
 *                               and the index of its first voxel in the voxel arrays
 *   voxel index = first_voxel + popcount(mask bits below the voxel's bit)
 * so only occupied voxels are stored, 4 bytes each (radiance), plus the active-voxel list.
 *
 * What cones read is also kept without indirections, in one `dense` array (a trilinear sample through
 * the bricks costs a map and a brick load per tap before the radiance load; these cost one load):
 *   dense[dense_offset[0] + 2 cell + half]   level 0: the brick masks of every brick cell, empty ones 0
 *                                            (level-0 voxels are opaque, so occupancy is one bit)
 *   dense[dense_offset[l] + 64 cell + bit]   level l >= 1: the radiance word of every voxel, 0 where empty,
 *                                            brick by brick so a 2x2x2 footprint stays within few cache lines
 * Levels 1 and up hold N^3 / 7 words, so this adds about 4/7 + 1/8 bytes a level-0 voxel.
 *
 * Per voxel (index i, all levels):
 *   radiance[i]   6-bit RGB mantissas + 5-bit shared exponent (outgoing radiance of the occupied part),
 *                 an interior flag, 8-bit occupancy (square-root coded)      -- what cones sample
 *   positions[i]  x | y << 10 | z << 20 inside its level: the active-voxel list (papers/001 §4.4)
 * Level 0 only (what relighting needs):
 *   albedo[i]     sRGB8 albedo | kind << 24 (0 surface, 1..254 emissive material + 1, 255 interior)
 *   normal[i]     octahedral normal 12 + 12 bits | signed distance of the surface plane from the voxel
 *                 centre, 8 bits in [-1, 1] voxels */
#ifndef TESSERA_KERNELS_VCT_VCT_COMMON_H
#define TESSERA_KERNELS_VCT_VCT_COMMON_H
#include "kernels/base/vec.h"

#define TS_VCT_MAX_LEVELS 12u /* N <= 1024: levels 0..10, plus the end entry of voxel_offset */
#define TS_VCT_NONE 0xFFFFFFFFu

#define TS_VCT_KIND_SURFACE 0u
#define TS_VCT_KIND_INTERIOR 255u
#define TS_VCT_KIND_MAX_EMISSIVE 254u

#define TS_VCT_INTERIOR_BIT 0x00800000u

/* Scalars of the grid, passed by value. Offsets are in entries of the concatenated per-level arrays;
 * voxel_offset[level_count] and brick_offset[level_count] are the totals. */
typedef struct VctGridParams {
  float origin_x, origin_y, origin_z; /* minimum corner of the level-0 grid */
  float voxel_size;                   /* level-0 voxel edge */
  float inv_voxel_size;
  uint resolution; /* N, a power of two */
  uint level_count; /* log2(N) + 1 */
  uint pad0;
  uint map_offset[TS_VCT_MAX_LEVELS];
  uint brick_offset[TS_VCT_MAX_LEVELS];
  uint voxel_offset[TS_VCT_MAX_LEVELS];
  uint dense_offset[TS_VCT_MAX_LEVELS]; /* dense_offset[level_count]: the dense array's words */
} VctGridParams;

/* ---- atomics and bit counts: OpenCL 1.2 core 32-bit global atomics; GCC builtins on the host ---- */
#ifdef TS_DEVICE_OPENCL
TS_FN uint ts_atomic_or(TS_GLOBAL uint* p, uint v) { return atomic_or((volatile __global uint*)p, v); }
TS_FN uint ts_atomic_add(TS_GLOBAL uint* p, uint v) { return atomic_add((volatile __global uint*)p, v); }
TS_FN uint ts_atomic_max(TS_GLOBAL uint* p, uint v) { return atomic_max((volatile __global uint*)p, v); }
TS_FN uint ts_popcount(uint x) { return popcount(x); }
#else
TS_FN uint ts_atomic_or(uint* p, uint v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
TS_FN uint ts_atomic_add(uint* p, uint v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
TS_FN uint ts_atomic_max(uint* p, uint v) {
  uint cur = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return cur;
}
TS_FN uint ts_popcount(uint x) { return (uint)__builtin_popcount(x); }
#endif

/* 2^e for e in [-126, 127], exact. */
TS_FN float vct_exp2i(int e) { return ts_as_float((uint)(e + 127) << 23); }

/* log2 for x > 0, linear between powers of two: exact at powers of two, monotonic, and the same
 * bits on every backend (only used to blend between mip levels). */
TS_FN float vct_log2_approx(float x) {
  uint b = ts_as_uint(x);
  return (float)((int)((b >> 23) & 255u) - 127) + (float)(b & 0x7FFFFFu) * (1.0f / 8388608.0f);
}

/* ---- level geometry ---- */
TS_FN uint vct_level_res(const VctGridParams* p, uint level) { return p->resolution >> level; }
TS_FN uint vct_level_bricks(const VctGridParams* p, uint level) {
  uint res = p->resolution >> level;
  return res >= 4u ? res >> 2 : 1u;
}
TS_FN uint vct_pack_pos(uint x, uint y, uint z) { return x | (y << 10) | (z << 20); }
TS_FN uint vct_pos_x(uint w) { return w & 1023u; }
TS_FN uint vct_pos_y(uint w) { return (w >> 10) & 1023u; }
TS_FN uint vct_pos_z(uint w) { return (w >> 20) & 1023u; }
/* bit of a voxel inside its brick */
TS_FN uint vct_brick_bit(uint x, uint y, uint z) { return ((z & 3u) << 4) | ((y & 3u) << 2) | (x & 3u); }
TS_FN uint vct_brick_cell(const VctGridParams* p, uint level, uint x, uint y, uint z) {
  uint m = vct_level_bricks(p, level);
  return ((z >> 2) * m + (y >> 2)) * m + (x >> 2);
}
/* World position of a voxel centre at a level. */
TS_FN float3 vct_voxel_center(const VctGridParams* p, uint level, uint x, uint y, uint z) {
  float s = p->voxel_size * vct_exp2i((int)level);
  return make_float3(p->origin_x + ((float)x + 0.5f) * s, p->origin_y + ((float)y + 0.5f) * s,
                     p->origin_z + ((float)z + 0.5f) * s);
}

/* Dense radiance word index of voxel (x, y, z) of level >= 1. */
TS_FN uint vct_dense_index(const VctGridParams* p, uint level, uint x, uint y, uint z) {
  return p->dense_offset[level] + (vct_brick_cell(p, level, x, y, z) << 6) + vct_brick_bit(x, y, z);
}
/* Dense words of a level: its occupancy masks (level 0) or its radiance words. */
TS_FN uint vct_dense_level_words(const VctGridParams* p, uint level) {
  uint m = vct_level_bricks(p, level);
  return level == 0u ? 2u * m * m * m : 64u * m * m * m;
}

/* Index of the voxel with mask bit `bit` in brick record (mask_lo, mask_hi, first, cell), or TS_VCT_NONE. */
TS_FN uint vct_brick_voxel(uint lo, uint hi, uint first, uint bit) {
  if (bit < 32u) {
    if (!((lo >> bit) & 1u)) return TS_VCT_NONE;
    return first + ts_popcount(lo & ((1u << bit) - 1u));
  }
  bit -= 32u;
  if (!((hi >> bit) & 1u)) return TS_VCT_NONE;
  return first + ts_popcount(lo) + ts_popcount(hi & ((1u << bit) - 1u));
}

/* ---- radiance word ---- */
typedef struct VctVoxel {
  float3 radiance; /* of the occupied part, not premultiplied */
  float alpha;     /* occupancy in [0, 1] */
  uint interior;
} VctVoxel;

TS_FN uint vct_encode_alpha(float a) {
  float t;
  uint q;
  if (!(a > 0.0f)) return 0u;
  if (a >= 1.0f) return 255u;
  t = a * 65025.0f; /* q^2 */
  q = (uint)ts_sqrt(t);
  if (q > 255u) q = 255u;
  while (q < 255u && (float)((q + 1u) * (q + 1u)) <= t) ++q;
  while (q > 0u && (float)(q * q) > t) --q;
  if (q < 255u && t - (float)(q * q) > (float)((q + 1u) * (q + 1u)) - t) ++q;
  return q == 0u ? 1u : q; /* any occupancy stays visible */
}
TS_FN float vct_decode_alpha(uint q) { return (float)(q * q) * (1.0f / 65025.0f); }

TS_FN uint vct_quantize_mantissa(float c, float scale) {
  float m = ts_floor(ts_fmax(c, 0.0f) * scale + 0.5f);
  return m >= 63.0f ? 63u : (uint)m;
}

/* Shared-exponent RGB: value = mantissa * 2^(E - 21), E in 0..31, mantissas 0..63. */
TS_FN uint vct_encode_rgb(float3 c) {
  float m = ts_fmax(ts_fmax(c.x, c.y), c.z);
  int e;
  float scale;
  if (!(m > 0.0f)) return 0u;
  e = (int)((ts_as_uint(m) >> 23) & 255u) - 126; /* m < 2^e */
  if (e < -15) e = -15;
  if (e > 16) e = 16;
  scale = vct_exp2i(6 - e);
  if (ts_floor(m * scale + 0.5f) >= 64.0f && e < 16) {
    ++e;
    scale = vct_exp2i(6 - e);
  }
  return vct_quantize_mantissa(c.x, scale) | (vct_quantize_mantissa(c.y, scale) << 6) |
         (vct_quantize_mantissa(c.z, scale) << 12) | ((uint)(e + 15) << 18);
}
TS_FN float3 vct_decode_rgb(uint w) {
  float s = vct_exp2i((int)((w >> 18) & 31u) - 21);
  return make_float3((float)(w & 63u) * s, (float)((w >> 6) & 63u) * s, (float)((w >> 12) & 63u) * s);
}

TS_FN uint vct_encode_voxel(float3 radiance, float alpha, uint interior) {
  uint q = vct_encode_alpha(alpha);
  if (q == 0u) return 0u;
  return vct_encode_rgb(radiance) | (interior ? TS_VCT_INTERIOR_BIT : 0u) | (q << 24);
}
TS_FN VctVoxel vct_decode_voxel(uint w) {
  VctVoxel v;
  v.radiance = vct_decode_rgb(w);
  v.alpha = vct_decode_alpha(w >> 24);
  v.interior = (w & TS_VCT_INTERIOR_BIT) ? 1u : 0u;
  return v;
}

/* ---- level-0 attribute words ---- */
TS_FN float vct_sign(float x) { return x >= 0.0f ? 1.0f : -1.0f; }

TS_FN uint vct_quantize_unit(float x, float levels) { /* [-1, 1] -> 0..levels */
  float q = ts_floor((x * 0.5f + 0.5f) * levels + 0.5f);
  return q <= 0.0f ? 0u : (q >= levels ? (uint)levels : (uint)q);
}

/* Octahedral unit normal (12 + 12 bits) and the plane offset in voxels (8 bits, [-1, 1]). */
TS_FN uint vct_encode_normal(float3 n, float offset_voxels) {
  float s = ts_fabs(n.x) + ts_fabs(n.y) + ts_fabs(n.z);
  float u, v;
  if (!(s > 0.0f)) {
    n = make_float3(0.0f, 0.0f, 1.0f);
    s = 1.0f;
  }
  u = n.x / s;
  v = n.y / s;
  if (n.z < 0.0f) {
    float ou = (1.0f - ts_fabs(v)) * vct_sign(u), ov = (1.0f - ts_fabs(u)) * vct_sign(v);
    u = ou;
    v = ov;
  }
  return vct_quantize_unit(u, 4095.0f) | (vct_quantize_unit(v, 4095.0f) << 12) |
         (vct_quantize_unit(ts_fmax(-1.0f, ts_fmin(1.0f, offset_voxels)), 254.0f) << 24);
}
TS_FN float3 vct_decode_normal(uint w) {
  float u = (float)(w & 4095u) * (2.0f / 4095.0f) - 1.0f;
  float v = (float)((w >> 12) & 4095u) * (2.0f / 4095.0f) - 1.0f;
  float z = 1.0f - ts_fabs(u) - ts_fabs(v);
  if (z < 0.0f) {
    float ou = (1.0f - ts_fabs(v)) * vct_sign(u), ov = (1.0f - ts_fabs(u)) * vct_sign(v);
    u = ou;
    v = ov;
  }
  return v3_normalize(make_float3(u, v, z));
}
TS_FN float vct_decode_offset(uint w) { return (float)(w >> 24) * (2.0f / 254.0f) - 1.0f; }

#endif
