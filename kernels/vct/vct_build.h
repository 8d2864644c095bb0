/* Building the sparse grid from the dense per-brick masks, finishing the level-0 voxels, and the mip
 * levels (papers/001 §4.5), as work items shared by the OpenCL kernels and the host backend.
 *
 *   vct_parent_masks_cell   level l brick cell -> the parent bits in the level l+1 masks
 *   vct_count_cell          bricks and voxels of a level (atomic counters)
 *   vct_assign_cell         brick record, map entry and the active-voxel list of one brick, and the
 *                           level-0 occupancy masks of the dense array
 *   vct_finalize_voxel      level-0 albedo / normal / kind words from the fragment sums
 *   vct_mip_voxel           one voxel of level l >= 1 from its eight children (a gather, driven by the
 *                           level's active-voxel list: no atomics, the same bits on every backend),
 *                           stored in the sparse voxel arrays and in the dense array
 *
 * Mip rule: occupancy is the mean of the eight children; radiance is the occupancy-weighted mean of the
 * children that are not interior (a filled object's inside has no radiance of its own, and must not
 * darken the surface colour of coarse voxels); a voxel whose children are all interior is interior. */
#ifndef TESSERA_KERNELS_VCT_VCT_BUILD_H
#define TESSERA_KERNELS_VCT_VCT_BUILD_H
#include "kernels/shading/color.h"
#include "kernels/vct/vct_grid.h"
#include "kernels/vct/vct_voxelize.h"

TS_FN void vct_cell_coords(const VctGridParams* p, uint level, uint cell, uint* bx, uint* by, uint* bz) {
  uint m = vct_level_bricks(p, level);
  *bx = cell % m;
  *by = (cell / m) % m;
  *bz = cell / (m * m);
}

TS_FN void vct_parent_masks_cell(const VctGridParams* p, uint level, uint cell, TS_GLOBAL uint* dense_masks) {
  uint base = p->map_offset[level] + cell, lo = dense_masks[2u * base], hi = dense_masks[2u * base + 1u];
  uint plo = 0u, phi = 0u, bit, bx, by, bz, pcell = 0u;
  if ((lo | hi) == 0u) return;
  vct_cell_coords(p, level, cell, &bx, &by, &bz);
  for (bit = 0u; bit < 64u; ++bit) {
    uint set = bit < 32u ? (lo >> bit) & 1u : (hi >> (bit - 32u)) & 1u;
    uint x, y, z, pb;
    if (!set) continue;
    x = (bx * 4u + (bit & 3u)) >> 1;
    y = (by * 4u + ((bit >> 2) & 3u)) >> 1;
    z = (bz * 4u + (bit >> 4)) >> 1;
    pcell = vct_brick_cell(p, level + 1u, x, y, z); /* the same for every bit of this brick */
    pb = vct_brick_bit(x, y, z);
    if (pb < 32u) plo |= 1u << pb;
    else phi |= 1u << (pb - 32u);
  }
  pcell += p->map_offset[level + 1u];
  if (plo) ts_atomic_or(dense_masks + 2u * pcell, plo);
  if (phi) ts_atomic_or(dense_masks + 2u * pcell + 1u, phi);
}

/* counters: 2 per level (bricks, voxels). */
TS_FN void vct_count_cell(const VctGridParams* p, uint level, uint cell, TS_GLOBAL const uint* dense_masks,
                          TS_GLOBAL uint* counters) {
  uint base = p->map_offset[level] + cell, lo = dense_masks[2u * base], hi = dense_masks[2u * base + 1u];
  if ((lo | hi) == 0u) return;
  ts_atomic_add(counters + 2u * level, 1u);
  ts_atomic_add(counters + 2u * level + 1u, ts_popcount(lo) + ts_popcount(hi));
}

TS_FN void vct_assign_cell(const VctGridParams* p, uint level, uint cell, TS_GLOBAL const uint* dense_masks,
                           TS_GLOBAL uint* counters, TS_GLOBAL uint* map, TS_GLOBAL uint4* bricks, TS_GLOBAL uint* positions,
                           TS_GLOBAL uint* dense) {
  uint base = p->map_offset[level] + cell, lo = dense_masks[2u * base], hi = dense_masks[2u * base + 1u];
  uint b, first, bit, rank = 0u, bx, by, bz;
  uint4 rec;
  if (level == 0u) {
    dense[p->dense_offset[0] + 2u * cell] = lo;
    dense[p->dense_offset[0] + 2u * cell + 1u] = hi;
  }
  if ((lo | hi) == 0u) {
    map[base] = 0u;
    return;
  }
  b = p->brick_offset[level] + ts_atomic_add(counters + 2u * level, 1u);
  first = p->voxel_offset[level] + ts_atomic_add(counters + 2u * level + 1u, ts_popcount(lo) + ts_popcount(hi));
  rec.x = lo;
  rec.y = hi;
  rec.z = first;
  rec.w = cell;
  bricks[b] = rec;
  map[base] = b + 1u;
  vct_cell_coords(p, level, cell, &bx, &by, &bz);
  for (bit = 0u; bit < 64u; ++bit) {
    uint set = bit < 32u ? (lo >> bit) & 1u : (hi >> (bit - 32u)) & 1u;
    if (!set) continue;
    positions[first + rank] = vct_pack_pos(bx * 4u + (bit & 3u), by * 4u + ((bit >> 2) & 3u), bz * 4u + (bit >> 4));
    ++rank;
  }
}

/* Level-0 voxel i (index in the level) from its fragment sums. No fragments: an interior voxel of a
 * filled object. */
TS_FN void vct_finalize_voxel(const ColorTables* ct, uint i, TS_GLOBAL const uint* accum, TS_GLOBAL uint* albedo,
                              TS_GLOBAL uint* normal) {
  TS_GLOBAL const uint* a = accum + TS_VCT_ACCUM_WORDS * i;
  uint count = a[0];
  float inv, r, g, b;
  float3 n;
  uint kind;
  if (count == 0u) {
    albedo[i] = TS_VCT_KIND_INTERIOR << 24;
    normal[i] = vct_encode_normal(make_float3(0.0f, 0.0f, 1.0f), 0.0f);
    return;
  }
  inv = 1.0f / ((float)count * TS_VCT_ALBEDO_SCALE);
  r = (float)a[1] * inv;
  g = (float)a[2] * inv;
  b = (float)a[3] * inv;
  kind = a[8];
  albedo[i] = linear_to_srgb8(ct, r) | (linear_to_srgb8(ct, g) << 8) | (linear_to_srgb8(ct, b) << 16) | (kind << 24);
  n = make_float3((float)(int)a[4], (float)(int)a[5], (float)(int)a[6]);
  normal[i] = vct_encode_normal(v3_normalize(n), (float)(int)a[7] / ((float)count * TS_VCT_OFFSET_SCALE));
}

/* Voxel `i` (global index) of level `level` >= 1, from the eight children at level - 1. */
TS_FN uint vct_mip_word(const VctGrid* g, uint level, uint i, TS_GLOBAL const uint* positions) {
  uint pw = positions[i], x = vct_pos_x(pw) * 2u, y = vct_pos_y(pw) * 2u, z = vct_pos_z(pw) * 2u, k;
  float alpha = 0.0f, weight = 0.0f;
  float3 sum = make_float3(0.0f, 0.0f, 0.0f);
  uint surface = 0u;
  for (k = 0u; k < 8u; ++k) {
    VctVoxel c = vct_fetch(g, level - 1u, (int)(x + (k & 1u)), (int)(y + ((k >> 1) & 1u)), (int)(z + (k >> 2)));
    alpha += c.alpha;
    if (c.alpha > 0.0f && !c.interior) {
      surface = 1u;
      weight += c.alpha;
      sum = v3_madd(sum, c.radiance, c.alpha);
    }
  }
  alpha *= 0.125f;
  if (!(alpha > 0.0f)) return 0u;
  return vct_encode_voxel(weight > 0.0f ? v3_scale(sum, 1.0f / weight) : sum, alpha, surface ? 0u : 1u);
}

/* Voxel `i` of level `level` >= 1 into the sparse radiance array and the dense one. The dense words of
 * empty voxels stay 0 from the build: relighting never changes which voxels are occupied. */
TS_FN void vct_mip_voxel(const VctGrid* g, uint level, uint i, TS_GLOBAL const uint* positions, TS_GLOBAL uint* radiance,
                         TS_GLOBAL uint* dense) {
  uint w = vct_mip_word(g, level, i, positions), pw = positions[i];
  radiance[i] = w;
  dense[vct_dense_index(&g->p, level, vct_pos_x(pw), vct_pos_y(pw), vct_pos_z(pw))] = w;
}

#endif
