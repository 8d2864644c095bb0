/* Reading the voxel grid: voxel lookup through the brick map, and trilinear / quadrilinear sampling of
 * premultiplied radiance and occupancy (papers/001 §4.6), from the dense arrays wherever they hold what
 * a sample needs: level-0 radiance goes through the bricks, everything else is one load a tap. */
#ifndef TESSERA_KERNELS_VCT_VCT_GRID_H
#define TESSERA_KERNELS_VCT_VCT_GRID_H
#include "kernels/vct/vct_common.h"

typedef struct VctGrid {
  VctGridParams p;
  TS_GLOBAL const uint* map;
  TS_GLOBAL const uint4* bricks;
  TS_GLOBAL const uint* radiance;
  TS_GLOBAL const uint* dense;
} VctGrid;

/* Index of voxel (x, y, z) of a level, or TS_VCT_NONE when it is empty (coordinates must be inside). */
TS_FN uint vct_lookup(const VctGrid* g, uint level, uint x, uint y, uint z) {
  uint b = g->map[g->p.map_offset[level] + vct_brick_cell(&g->p, level, x, y, z)];
  uint4 rec;
  if (b == 0u) return TS_VCT_NONE;
  rec = g->bricks[b - 1u];
  return vct_brick_voxel(rec.x, rec.y, rec.z, vct_brick_bit(x, y, z));
}

/* Decoded voxel, zero when empty or outside the level. */
TS_FN VctVoxel vct_fetch(const VctGrid* g, uint level, int x, int y, int z) {
  int res = (int)vct_level_res(&g->p, level);
  VctVoxel v;
  uint i;
  v.radiance = make_float3(0.0f, 0.0f, 0.0f);
  v.alpha = 0.0f;
  v.interior = 0u;
  if (x < 0 || y < 0 || z < 0 || x >= res || y >= res || z >= res) return v;
  i = vct_lookup(g, level, (uint)x, (uint)y, (uint)z);
  if (i == TS_VCT_NONE) return v;
  return vct_decode_voxel(g->radiance[i]);
}

/* The eight taps of a trilinear sample at q (level voxel units from the grid corner, voxel centres at
 * i + 0.5): the lower corner voxel and the fractions towards the upper one. inside = 0 when no tap
 * lies in the level. */
typedef struct VctTrilinear {
  int ix, iy, iz, res, inside;
  float ax, ay, az;
} VctTrilinear;

TS_FN VctTrilinear vct_trilinear(const VctGridParams* p, uint level, float3 q) {
  VctTrilinear t;
  float fx = q.x - 0.5f, fy = q.y - 0.5f, fz = q.z - 0.5f;
  float bx = ts_floor(fx), by = ts_floor(fy), bz = ts_floor(fz);
  t.res = (int)vct_level_res(p, level);
  t.ax = fx - bx;
  t.ay = fy - by;
  t.az = fz - bz;
  t.ix = (int)bx;
  t.iy = (int)by;
  t.iz = (int)bz;
  t.inside = t.ix >= -1 && t.iy >= -1 && t.iz >= -1 && t.ix < t.res && t.iy < t.res && t.iz < t.res;
  return t;
}

/* Voxel of tap k (0..7, bit 0 x, bit 1 y, bit 2 z); 0 when it lies outside the level. */
TS_FN int vct_trilinear_tap(const VctTrilinear* t, int k, uint* x, uint* y, uint* z) {
  int tx = t->ix + (k & 1), ty = t->iy + ((k >> 1) & 1), tz = t->iz + ((k >> 2) & 1);
  if (tx < 0 || ty < 0 || tz < 0 || tx >= t->res || ty >= t->res || tz >= t->res) return 0;
  *x = (uint)tx;
  *y = (uint)ty;
  *z = (uint)tz;
  return 1;
}

TS_FN float vct_trilinear_weight(const VctTrilinear* t, int k) {
  return ((k & 1) ? t->ax : 1.0f - t->ax) * (((k >> 1) & 1) ? t->ay : 1.0f - t->ay) *
         (((k >> 2) & 1) ? t->az : 1.0f - t->az);
}

/* Trilinear sample through the bricks: xyz = premultiplied radiance, w = occupancy. q is in level voxel
 * units measured from the grid corner (voxel centres at i + 0.5). The eight taps go through a one-entry
 * brick cache, since neighbouring taps usually share a brick. */
TS_FN float4 vct_sample_level_bricks(const VctGrid* g, uint level, float3 q) {
  VctTrilinear t = vct_trilinear(&g->p, level, q);
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  uint cached_cell = TS_VCT_NONE, lo = 0u, hi = 0u, first = 0u, map_base = g->p.map_offset[level];
  int k;
  if (!t.inside) return acc;
  for (k = 0; k < 8; ++k) {
    uint x, y, z;
    uint cell, i, w;
    float wt, a;
    if (!vct_trilinear_tap(&t, k, &x, &y, &z)) continue;
    cell = vct_brick_cell(&g->p, level, x, y, z);
    if (cell != cached_cell) {
      uint b = g->map[map_base + cell];
      cached_cell = cell;
      if (b == 0u) {
        lo = 0u;
        hi = 0u;
      } else {
        uint4 rec = g->bricks[b - 1u];
        lo = rec.x;
        hi = rec.y;
        first = rec.z;
      }
    }
    if ((lo | hi) == 0u) continue;
    i = vct_brick_voxel(lo, hi, first, vct_brick_bit(x, y, z));
    if (i == TS_VCT_NONE) continue;
    w = g->radiance[i];
    wt = vct_trilinear_weight(&t, k);
    a = wt * vct_decode_alpha(w >> 24);
    {
      float3 c = vct_decode_rgb(w);
      acc.x += a * c.x;
      acc.y += a * c.y;
      acc.z += a * c.z;
    }
    acc.w += a;
  }
  return acc;
}

/* The same sample from the dense radiance words of a level >= 1, tap for tap in the same order. */
TS_FN float4 vct_sample_level_dense(const VctGrid* g, uint level, float3 q) {
  VctTrilinear t = vct_trilinear(&g->p, level, q);
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  int k;
  if (!t.inside) return acc;
  for (k = 0; k < 8; ++k) {
    uint x, y, z;
    uint w;
    float wt, a;
    float3 c;
    if (!vct_trilinear_tap(&t, k, &x, &y, &z)) continue;
    w = g->dense[vct_dense_index(&g->p, level, x, y, z)];
    if (w == 0u) continue;
    wt = vct_trilinear_weight(&t, k);
    a = wt * vct_decode_alpha(w >> 24);
    c = vct_decode_rgb(w);
    acc.x += a * c.x;
    acc.y += a * c.y;
    acc.z += a * c.z;
    acc.w += a;
  }
  return acc;
}

/* Trilinear sample at a level: xyz = premultiplied radiance, w = occupancy. */
TS_FN float4 vct_sample_level(const VctGrid* g, uint level, float3 q) {
  return level == 0u ? vct_sample_level_bricks(g, level, q) : vct_sample_level_dense(g, level, q);
}

/* Occupancy alone of a trilinear sample (the w of vct_sample_level, the same bits): level 0 from the
 * occupancy masks, coarser levels from the occupancy byte of their dense words. */
TS_FN float vct_sample_occupancy_level(const VctGrid* g, uint level, float3 q) {
  VctTrilinear t = vct_trilinear(&g->p, level, q);
  float acc = 0.0f;
  int k;
  if (!t.inside) return acc;
  for (k = 0; k < 8; ++k) {
    uint x, y, z;
    float wt, a;
    if (!vct_trilinear_tap(&t, k, &x, &y, &z)) continue;
    if (level == 0u) {
      uint bit = vct_brick_bit(x, y, z);
      uint mask = g->dense[g->p.dense_offset[0] + 2u * vct_brick_cell(&g->p, 0u, x, y, z) + (bit >> 5)];
      if (!((mask >> (bit & 31u)) & 1u)) continue;
      a = 1.0f; /* every level-0 voxel is opaque */
    } else {
      uint w = g->dense[vct_dense_index(&g->p, level, x, y, z)];
      if (w == 0u) continue;
      a = vct_decode_alpha(w >> 24);
    }
    wt = vct_trilinear_weight(&t, k);
    a *= wt; /* rounded before the sum, as vct_sample_level does */
    acc += a;
  }
  return acc;
}

/* Position in level-`level` voxel units of a world point. */
TS_FN float3 vct_level_coords(const VctGrid* g, uint level, float3 p) {
  float s = g->p.inv_voxel_size * vct_exp2i(-(int)level);
  return make_float3((p.x - g->p.origin_x) * s, (p.y - g->p.origin_y) * s, (p.z - g->p.origin_z) * s);
}

/* Quadrilinear sample at a fractional level (clamped to the coarsest). */
TS_FN float4 vct_sample(const VctGrid* g, float3 p, float level) {
  float top = (float)(g->p.level_count - 1u);
  uint l0;
  float t;
  float4 a, b;
  if (level <= 0.0f) return vct_sample_level(g, 0u, vct_level_coords(g, 0u, p));
  if (level >= top) return vct_sample_level(g, g->p.level_count - 1u, vct_level_coords(g, g->p.level_count - 1u, p));
  l0 = (uint)level;
  t = level - (float)l0;
  a = vct_sample_level(g, l0, vct_level_coords(g, l0, p));
  if (t == 0.0f) return a;
  b = vct_sample_level(g, l0 + 1u, vct_level_coords(g, l0 + 1u, p));
  return make_float4(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t, a.w + (b.w - a.w) * t);
}

/* Quadrilinear occupancy at a fractional level (clamped to the coarsest): the w of vct_sample. */
TS_FN float vct_sample_occupancy(const VctGrid* g, float3 p, float level) {
  uint top = g->p.level_count - 1u, l0;
  float t, a, b;
  if (level <= 0.0f) return vct_sample_occupancy_level(g, 0u, vct_level_coords(g, 0u, p));
  if (level >= (float)top) return vct_sample_occupancy_level(g, top, vct_level_coords(g, top, p));
  l0 = (uint)level;
  t = level - (float)l0;
  a = vct_sample_occupancy_level(g, l0, vct_level_coords(g, l0, p));
  if (t == 0.0f) return a;
  b = vct_sample_occupancy_level(g, l0 + 1u, vct_level_coords(g, l0 + 1u, p));
  return a + (b - a) * t;
}

/* The coarsest empty voxel of levels `finest` .. `coarsest` (>= 1) that holds world point p, as a world
 * box [*lo, *hi]; 0 when each of them is occupied or p is outside the grid. Every finer voxel inside an
 * empty one is empty too (a coarse voxel is occupied where any child is), so samples whose taps all lie
 * in the box read exactly nothing. */
TS_FN int vct_empty_box(const VctGrid* g, float3 p, uint finest, uint coarsest, float3* lo, float3* hi) {
  uint level;
  if (coarsest >= g->p.level_count) coarsest = g->p.level_count - 1u;
  for (level = coarsest; level >= finest && level >= 1u; --level) {
    float3 q = vct_level_coords(g, level, p);
    float s = g->p.voxel_size * vct_exp2i((int)level);
    float fx = ts_floor(q.x), fy = ts_floor(q.y), fz = ts_floor(q.z);
    int res = (int)vct_level_res(&g->p, level), x = (int)fx, y = (int)fy, z = (int)fz;
    if (x < 0 || y < 0 || z < 0 || x >= res || y >= res || z >= res) return 0;
    if (g->dense[vct_dense_index(&g->p, level, (uint)x, (uint)y, (uint)z)] == 0u) {
      *lo = make_float3(g->p.origin_x + fx * s, g->p.origin_y + fy * s, g->p.origin_z + fz * s);
      *hi = make_float3(lo->x + s, lo->y + s, lo->z + s);
      return 1;
    }
  }
  return 0;
}

/* Whether the cube of half-edge `reach` around p lies inside the box [lo, hi]. */
TS_FN int vct_cube_in_box(float3 p, float reach, float3 lo, float3 hi) {
  return p.x - reach >= lo.x && p.y - reach >= lo.y && p.z - reach >= lo.z && p.x + reach <= hi.x && p.y + reach <= hi.y &&
         p.z + reach <= hi.z;
}

/* Whether a world point lies inside the grid, grown by `margin` world units. */
TS_FN int vct_inside(const VctGrid* g, float3 p, float margin) {
  float ext = g->p.voxel_size * (float)g->p.resolution;
  return p.x >= g->p.origin_x - margin && p.y >= g->p.origin_y - margin && p.z >= g->p.origin_z - margin &&
         p.x <= g->p.origin_x + ext + margin && p.y <= g->p.origin_y + ext + margin && p.z <= g->p.origin_z + ext + margin;
}

#endif
