/* Work items of the incremental grid update (instances moved: kernels/device/cpu/vct_update_cpu.h says
 * what it does and why), shared by the host backend and the OpenCL kernels (vct.cl, launched by
 * worker/render/opencl_vct_update.cpp).
 *
 * The update recomputes whole brick cells: those of each region at level 0 and, above, the cells over
 * them. `boxes` holds them as 6 uints a box, [lo x, y, z, hi x, y, z) of brick cells, box (region r,
 * level l) at boxes + 6 * (r * level_count + l). A box's cells are numbered k = 0 .. count - 1, x fastest.
 * `dirty` flags (one uint a brick cell of every level, at map_offset[level] + cell) mark the cells whose
 * mip voxels are computed again. */
#ifndef TESSERA_KERNELS_VCT_VCT_UPDATE_H
#define TESSERA_KERNELS_VCT_VCT_UPDATE_H
#include "kernels/vct/vct_build.h"
#include "kernels/vct/vct_light.h"

TS_FN uint vct_min_u(uint a, uint b) { return a < b ? a : b; }

TS_FN TS_GLOBAL const uint* vct_update_box(const VctGridParams* p, TS_GLOBAL const uint* boxes, uint region, uint level) {
  return boxes + 6u * (region * p->level_count + level);
}

TS_FN uint vct_box_count(TS_GLOBAL const uint* box) { return (box[3] - box[0]) * (box[4] - box[1]) * (box[5] - box[2]); }

/* The cell index (in its level, m cells an edge) of the k-th cell of a box. */
TS_FN uint vct_box_cell(TS_GLOBAL const uint* box, uint k, uint m) {
  uint w = box[3] - box[0], h = box[4] - box[1];
  return ((box[2] + k / (w * h)) * m + box[1] + (k / w) % h) * m + box[0] + k % w;
}

TS_FN int vct_cell_recomputed(const VctGridParams* p, TS_GLOBAL const uint* boxes, uint regions, uint level, uint cell) {
  uint x, y, z, r;
  vct_cell_coords(p, level, cell, &x, &y, &z);
  for (r = 0u; r < regions; ++r) {
    TS_GLOBAL const uint* b = vct_update_box(p, boxes, r, level);
    if (x >= b[0] && x < b[3] && y >= b[1] && y < b[4] && z >= b[2] && z < b[5]) return 1;
  }
  return 0;
}

TS_FN uint vct_level_of_brick(const VctGridParams* p, uint b) {
  uint l = 0u;
  while (l + 1u < p->level_count && b >= p->brick_offset[l + 1u]) ++l;
  return l;
}

/* Cell k of box (region, level): its brick masks cleared (they are marked again, from the triangles or
 * from the children). */
TS_FN void vct_clear_box_masks(const VctGridParams* p, TS_GLOBAL const uint* boxes, uint region, uint level, uint k,
                               TS_GLOBAL uint* masks) {
  TS_GLOBAL const uint* b = vct_update_box(p, boxes, region, level);
  uint cell = p->map_offset[level] + vct_box_cell(b, k, vct_level_bricks(p, level));
  masks[2u * cell] = 0u;
  masks[2u * cell + 1u] = 0u;
}

/* Cells below box (region, level + 1), child level `level`: cell k of their box marks its parent's bits. */
TS_FN uint vct_children_count(const VctGridParams* p, TS_GLOBAL const uint* boxes, uint region, uint level) {
  TS_GLOBAL const uint* b = vct_update_box(p, boxes, region, level + 1u);
  uint m = vct_level_bricks(p, level), n = 1u, a;
  for (a = 0u; a < 3u; ++a) n *= vct_min_u(2u * b[3u + a], m) - vct_min_u(2u * b[a], m);
  return n;
}

TS_FN void vct_box_parent_masks(const VctGridParams* p, TS_GLOBAL const uint* boxes, uint region, uint level, uint k,
                                TS_GLOBAL uint* masks) {
  TS_GLOBAL const uint* b = vct_update_box(p, boxes, region, level + 1u);
  uint m = vct_level_bricks(p, level);
  uint lx = vct_min_u(2u * b[0], m), ly = vct_min_u(2u * b[1], m), lz = vct_min_u(2u * b[2], m);
  uint w = vct_min_u(2u * b[3], m) - lx, h = vct_min_u(2u * b[4], m) - ly;
  vct_parent_masks_cell(p, level, ((lz + k / (w * h)) * m + ly + (k / w) % h) * m + lx + k % w, masks);
}

/* Cell k of box (region, level >= 1): its 64 dense words emptied until its mips are computed again. */
TS_FN void vct_clear_box_dense(const VctGridParams* p, TS_GLOBAL const uint* boxes, uint region, uint level, uint k,
                               TS_GLOBAL uint* dense) {
  TS_GLOBAL const uint* b = vct_update_box(p, boxes, region, level);
  uint first = p->dense_offset[level] + 64u * vct_box_cell(b, k, vct_level_bricks(p, level)), i;
  for (i = 0u; i < 64u; ++i) dense[first + i] = 0u;
}

/* Brick b of the new layout, outside the recomputed cells: its masks are the ones it had, so its voxel
 * words are copied from where the old layout (old_p, old_map, old_bricks) kept them. */
TS_FN void vct_copy_kept_brick(const VctGridParams* p, const VctGridParams* old_p, uint b, TS_GLOBAL const uint* boxes,
                               uint regions, TS_GLOBAL const uint4* bricks, TS_GLOBAL const uint* old_map,
                               TS_GLOBAL const uint4* old_bricks, TS_GLOBAL const uint* old_radiance,
                               TS_GLOBAL const uint* old_albedo, TS_GLOBAL const uint* old_normal, TS_GLOBAL uint* radiance,
                               TS_GLOBAL uint* albedo, TS_GLOBAL uint* normal) {
  uint4 rec = bricks[b], was;
  uint level = vct_level_of_brick(p, b), count, v;
  if (vct_cell_recomputed(p, boxes, regions, level, rec.w)) return;
  was = old_bricks[old_map[old_p->map_offset[level] + rec.w] - 1u];
  count = ts_popcount(rec.x) + ts_popcount(rec.y);
  for (v = 0u; v < count; ++v) radiance[rec.z + v] = old_radiance[was.z + v];
  if (level != 0u) return;
  for (v = 0u; v < count; ++v) {
    albedo[rec.z + v] = old_albedo[was.z + v];
    normal[rec.z + v] = old_normal[was.z + v];
  }
}

/* Level-0 brick b: inside a region, its copy in local_bricks gets a first voxel counted from the
 * regions' first (fragment sums are kept for the regions' voxels only) and b joins `list`.
 * counters: [0] the regions' voxels, [1] the list's length. */
TS_FN void vct_region_local_brick(const VctGridParams* p, uint b, TS_GLOBAL const uint* boxes, uint regions,
                                  TS_GLOBAL const uint4* bricks, TS_GLOBAL uint4* local_bricks, TS_GLOBAL uint* counters,
                                  TS_GLOBAL uint* list) {
  uint4 rec = bricks[b];
  if (!vct_cell_recomputed(p, boxes, regions, 0u, rec.w)) return;
  rec.z = ts_atomic_add(counters, ts_popcount(rec.x) + ts_popcount(rec.y));
  local_bricks[b] = rec;
  list[ts_atomic_add(counters + 1u, 1u)] = b;
}

/* The voxels of level-0 brick b (a region's) from their fragment sums. */
TS_FN void vct_finalize_region_brick(const ColorTables* ct, uint b, TS_GLOBAL const uint4* bricks,
                                     TS_GLOBAL const uint4* local_bricks, TS_GLOBAL const uint* accum,
                                     TS_GLOBAL uint* albedo, TS_GLOBAL uint* normal) {
  uint4 rec = bricks[b];
  uint count = ts_popcount(rec.x) + ts_popcount(rec.y), v;
  for (v = 0u; v < count; ++v)
    vct_finalize_voxel(ct, v, accum + TS_VCT_ACCUM_WORDS * local_bricks[b].z, albedo + rec.z, normal + rec.z);
}

/* Does the segment from `a` along `d` for t in [0, t_end] cross the box (6 floats: min xyz, max xyz)? */
TS_FN int vct_segment_crosses(float3 a, float3 d, float t_end, TS_GLOBAL const float* box) {
  float t0 = 0.0f, t1 = t_end, o[3], v[3];
  uint k;
  o[0] = a.x, o[1] = a.y, o[2] = a.z;
  v[0] = d.x, v[1] = d.y, v[2] = d.z;
  for (k = 0u; k < 3u; ++k) {
    float ta, tb, s;
    if (v[k] == 0.0f) {
      if (o[k] < box[k] || o[k] > box[3u + k]) return 0;
      continue;
    }
    ta = (box[k] - o[k]) / v[k];
    tb = (box[3u + k] - o[k]) / v[k];
    if (ta > tb) s = ta, ta = tb, tb = s;
    t0 = ts_fmax(t0, ta);
    t1 = ts_fmin(t1, tb);
    if (t0 > t1) return 0;
  }
  return 1;
}

/* Could a shadow ray from the point c toward any light cross any of the boxes? */
TS_FN int vct_shadow_may_cross(float3 c, TS_GLOBAL const VctLight* lights, uint light_count, TS_GLOBAL const float* boxes,
                               uint box_count) {
  uint b, l;
  for (b = 0u; b < box_count; ++b)
    for (l = 0u; l < light_count; ++l) {
      VctLight light = lights[l];
      if (light.type == TS_VCT_LIGHT_DIRECTIONAL) {
        if (vct_segment_crosses(c, make_float3(-light.x, -light.y, -light.z), TS_INFINITY, boxes + 6u * b)) return 1;
      } else if (vct_segment_crosses(c, v3_sub(make_float3(light.x, light.y, light.z), c), 1.0f, boxes + 6u * b)) {
        return 1;
      }
    }
  return 0;
}

/* Level-0 brick b of the light step: a region's voxels are all lit; elsewhere those whose shadow rays may
 * cross a changed box. A shadow ray starts within 1.5 voxels of its voxel's centre, so `grown` holds the
 * changed boxes 2 voxels larger; every voxel centre lies within 2.6 voxels of its brick's centre, so a
 * brick whose centre's segments miss `brick_grown` (3 voxels more) has no voxel to test. The brick's cell
 * is flagged dirty where any light changed; tally: [0] voxels tested outside the regions, [1] of those,
 * voxels whose light changed. */
TS_FN void vct_update_light_brick(const SceneView* scene, const ColorTables* ct, const VctGridParams* p,
                                  TS_GLOBAL const VctLight* lights, uint light_count, uint b, TS_GLOBAL const uint* boxes,
                                  uint regions, TS_GLOBAL const float* grown, TS_GLOBAL const float* brick_grown,
                                  uint changed_boxes, TS_GLOBAL const uint4* bricks, TS_GLOBAL const uint* positions,
                                  TS_GLOBAL const uint* albedo, TS_GLOBAL const uint* normal, TS_GLOBAL uint* radiance,
                                  TS_GLOBAL uint* dirty, TS_GLOBAL uint* tally) {
  uint4 rec = bricks[b];
  uint count = ts_popcount(rec.x) + ts_popcount(rec.y), tested = 0u, changed = 0u, i;
  int inside = vct_cell_recomputed(p, boxes, regions, 0u, rec.w);
  if (!inside) {
    uint x, y, z;
    float3 mid;
    vct_cell_coords(p, 0u, rec.w, &x, &y, &z);
    mid = make_float3(p->origin_x + (float)(4u * x + 2u) * p->voxel_size, p->origin_y + (float)(4u * y + 2u) * p->voxel_size,
                      p->origin_z + (float)(4u * z + 2u) * p->voxel_size);
    if (!vct_shadow_may_cross(mid, lights, light_count, brick_grown, changed_boxes)) return;
  }
  for (i = rec.z; i < rec.z + count; ++i) {
    uint w;
    if (!inside) {
      uint pw = positions[i];
      if (!vct_shadow_may_cross(vct_voxel_center(p, 0u, vct_pos_x(pw), vct_pos_y(pw), vct_pos_z(pw)), lights, light_count,
                                grown, changed_boxes))
        continue;
      ++tested;
    }
    w = vct_relight_voxel(scene, ct, p, lights, light_count, i, positions, albedo, normal);
    if (!inside && w != radiance[i]) ++changed;
    radiance[i] = w;
  }
  if (inside || changed) dirty[p->map_offset[0] + rec.w] = 1u;
  if (tested) ts_atomic_add(tally, tested);
  if (changed) ts_atomic_add(tally + 1u, changed);
}

/* Cell k of box (region, level): dirty (its mips are computed again). */
TS_FN void vct_dirty_box_cell(const VctGridParams* p, TS_GLOBAL const uint* boxes, uint region, uint level, uint k,
                              TS_GLOBAL uint* dirty) {
  dirty[p->map_offset[level] + vct_box_cell(vct_update_box(p, boxes, region, level), k, vct_level_bricks(p, level))] = 1u;
}

/* A dirty cell of `level` makes its parent cell (level + 1) dirty. */
TS_FN void vct_dirty_parent(const VctGridParams* p, uint level, uint cell, TS_GLOBAL uint* dirty) {
  uint x, y, z, m = vct_level_bricks(p, level + 1u);
  if (!dirty[p->map_offset[level] + cell]) return;
  vct_cell_coords(p, level, cell, &x, &y, &z);
  dirty[p->map_offset[level + 1u] + (vct_min_u(z >> 1, m - 1u) * m + vct_min_u(y >> 1, m - 1u)) * m + vct_min_u(x >> 1, m - 1u)] = 1u;
}

/* Brick k of level >= 1: its mip voxels computed again where its cell is dirty. */
TS_FN void vct_update_mip_brick(const VctGrid* g, uint level, uint k, TS_GLOBAL const uint* dirty,
                                TS_GLOBAL const uint* positions, TS_GLOBAL uint* radiance, TS_GLOBAL uint* dense) {
  uint4 rec = g->bricks[g->p.brick_offset[level] + k];
  uint count = ts_popcount(rec.x) + ts_popcount(rec.y), i;
  if (!dirty[g->p.map_offset[level] + rec.w]) return;
  for (i = rec.z; i < rec.z + count; ++i) vct_mip_voxel(g, level, i, positions, radiance, dense);
}

#endif
