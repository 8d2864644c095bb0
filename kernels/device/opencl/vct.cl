/* OpenCL entry points of the `vct` mode (voxel cone tracing). Every kernel is a thin wrapper around one
 * work item of the kernels/vct headers, which the host backend (kernels/device/cpu/vct_cpu.cpp) runs too.
 * Build order on the host side: worker/render/opencl_vct_renderer.cpp. */
#include "kernels/device/opencl/kernel_params.h"
#include "kernels/render/tile_batch.h"
#include "kernels/vct/vct_build.h"
#include "kernels/vct/vct_shade.h"
#include "kernels/vct/vct_update.h"

/* The grid as the kernels/vct headers read it, from a kernel's grid arguments. */
inline VctGrid vct_grid_view(const VctGridParams grid, __global const uint* map, __global const uint4* bricks,
                             __global const uint* radiance, __global const uint* dense) {
  VctGrid g;
  g.p = grid;
  g.map = map;
  g.bricks = bricks;
  g.radiance = radiance;
  g.dense = dense;
  return g;
}

/* Surface voxelization pass (mark or accumulate) over the voxels of `region`: global (lanes, items), an
 * item a triangle (span_count 0) or an instance's triangle (kernels/vct/vct_voxelize.h). */
__kernel void vct_voxelize(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const VctGridParams grid, const VctRegion region,
                           __global const uint4* spans, const uint span_count, const uint items, const uint lanes,
                           const uint pass, __global uint* dense_masks, __global const uint* map,
                           __global const uint4* bricks, __global uint* accum) {
  uint lane = get_global_id(0), item = get_global_id(1), slot, tri;
  if (lane >= lanes || item >= items) return;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  tri = vct_work_triangle(spans, span_count, item, &slot);
  vct_voxelize_lane(&view, &ctx, &grid, &region, tri, slot, lane, lanes, pass, dense_masks, map, bricks, accum);
}

/* Filled voxelization, one column a work item: global (N, N). */
__kernel void vct_interior_columns(TS_SCENE_PARAMS, const VctGridParams grid, const uint axis, __global uint* votes) {
  uint i = get_global_id(0), j = get_global_id(1);
  if (i >= grid.resolution || j >= grid.resolution) return;
  TS_SCENE_VIEW(view);
  uint n = grid.resolution;
  vct_interior_column(&view, &grid, axis, i, j, votes + axis * ((n * n * n) >> 5)); /* one vote plane an axis */
}

__kernel void vct_interior_mark(const VctGridParams grid, const uint words_per_axis, __global const uint* votes,
                                __global uint* dense_masks) {
  uint w = get_global_id(0);
  if (w >= words_per_axis) return;
  vct_interior_mark_word(&grid, w, votes, words_per_axis, dense_masks);
}

/* Structure of the levels: one work item a brick cell of `level`. */
__kernel void vct_parent_masks(const VctGridParams grid, const uint level, const uint cells, __global uint* dense_masks) {
  uint c = get_global_id(0);
  if (c >= cells) return;
  vct_parent_masks_cell(&grid, level, c, dense_masks);
}

__kernel void vct_count(const VctGridParams grid, const uint level, const uint cells, __global const uint* dense_masks,
                        __global uint* counters) {
  uint c = get_global_id(0);
  if (c >= cells) return;
  vct_count_cell(&grid, level, c, dense_masks, counters);
}

__kernel void vct_assign(const VctGridParams grid, const uint level, const uint cells, __global const uint* dense_masks,
                         __global uint* counters, __global uint* map, __global uint4* bricks, __global uint* vct_positions,
                         __global uint* dense) {
  uint c = get_global_id(0);
  if (c >= cells) return;
  vct_assign_cell(&grid, level, c, dense_masks, counters, map, bricks, vct_positions, dense);
}

/* Level-0 attributes from the fragment sums: one work item a level-0 voxel. */
__kernel void vct_finalize(TS_SHADING_PARAMS, const uint count, __global const uint* accum, __global uint* albedo,
                           __global uint* normal) {
  uint i = get_global_id(0);
  if (i >= count) return;
  TS_SHADING_CONTEXT(ctx);
  vct_finalize_voxel(&ctx.color, i, accum, albedo, normal);
}

/* Direct light of the level-0 voxels (the active-voxel list): one work item a voxel. */
__kernel void vct_relight(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const VctGridParams grid, __global const VctLight* vct_lights,
                          const uint light_count, __global const uint* vct_positions, __global const uint* albedo,
                          __global const uint* normal, __global uint* radiance) {
  uint i = get_global_id(0);
  if (i >= grid.voxel_offset[1]) return;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  radiance[i] = vct_relight_voxel(&view, &ctx.color, &grid, vct_lights, light_count, i, vct_positions, albedo, normal);
}

/* Mip level `level` >= 1 from level - 1: one work item a voxel of the level's active list. */
__kernel void vct_mip(const VctGridParams grid, const uint level, __global const uint* map, __global const uint4* bricks,
                      __global uint* radiance, __global const uint* positions, __global uint* dense) {
  uint k = get_global_id(0);
  uint first = grid.voxel_offset[level];
  if (k >= grid.voxel_offset[level + 1u] - first) return;
  VctGrid g = vct_grid_view(grid, map, bricks, radiance, dense);
  vct_mip_voxel(&g, level, first + k, positions, radiance, dense);
}

/* The incremental update (kernels/vct/vct_update.h; order: worker/render/opencl_vct_update.cpp).
 * boxes: the recomputed cells, 6 uints a (region, level). Box kernels: one work item a cell k of box
 * (region, level); op 0 clears its masks, 1 marks the parents' masks from the cells below box
 * (region, level + 1) (k one of those), 2 empties its dense words, 3 flags it dirty. */
__kernel void vct_update_cells(const VctGridParams grid, __global const uint* boxes, const uint region, const uint level,
                               const uint op, const uint count, __global uint* words) {
  uint k = get_global_id(0);
  if (k >= count) return;
  if (op == 0u) vct_clear_box_masks(&grid, boxes, region, level, k, words);
  else if (op == 1u) vct_box_parent_masks(&grid, boxes, region, level, k, words);
  else if (op == 2u) vct_clear_box_dense(&grid, boxes, region, level, k, words);
  else vct_dirty_box_cell(&grid, boxes, region, level, k, words);
}

/* One work item a brick of the new layout: the kept ones' words copied from the old arrays. */
__kernel void vct_copy_kept(const VctGridParams grid, const VctGridParams old_grid, __global const uint* boxes,
                            const uint regions, __global const uint4* bricks, __global const uint* old_map,
                            __global const uint4* old_bricks, __global const uint* old_radiance,
                            __global const uint* old_albedo, __global const uint* old_normal, __global uint* radiance,
                            __global uint* albedo, __global uint* normal) {
  uint b = get_global_id(0);
  if (b >= grid.brick_offset[grid.level_count]) return;
  vct_copy_kept_brick(&grid, &old_grid, b, boxes, regions, bricks, old_map, old_bricks, old_radiance, old_albedo, old_normal,
                      radiance, albedo, normal);
}

/* One work item a level-0 brick: the regions' bricks numbered for their fragment sums. */
__kernel void vct_region_bricks(const VctGridParams grid, __global const uint* boxes, const uint regions,
                                __global const uint4* bricks, __global uint4* local_bricks, __global uint* counters,
                                __global uint* list) {
  uint b = get_global_id(0);
  if (b >= grid.brick_offset[1]) return;
  vct_region_local_brick(&grid, b, boxes, regions, bricks, local_bricks, counters, list);
}

/* One work item a brick of `list` (the regions' level-0 bricks). */
__kernel void vct_finalize_region(TS_SHADING_PARAMS, const uint count, __global const uint* list,
                                  __global const uint4* bricks, __global const uint4* local_bricks,
                                  __global const uint* accum, __global uint* albedo, __global uint* normal) {
  uint k = get_global_id(0);
  if (k >= count) return;
  TS_SHADING_CONTEXT(ctx);
  vct_finalize_region_brick(&ctx.color, list[k], bricks, local_bricks, accum, albedo, normal);
}

/* One work item a level-0 brick: the light of the regions' voxels and of moved shadows. */
__kernel void vct_update_light(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const VctGridParams grid,
                               __global const VctLight* vct_lights, const uint light_count, __global const uint* boxes,
                               const uint regions, __global const float* grown, const uint changed_boxes,
                               __global const uint4* bricks, __global const uint* vct_positions, __global const uint* albedo,
                               __global const uint* normal, __global uint* radiance, __global uint* dirty,
                               __global uint* tally) {
  uint b = get_global_id(0);
  if (b >= grid.brick_offset[1]) return;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  vct_update_light_brick(&view, &ctx.color, &grid, vct_lights, light_count, b, boxes, regions, grown,
                         grown + 6u * changed_boxes, changed_boxes, bricks, vct_positions, albedo, normal, radiance, dirty,
                         tally);
}

/* One work item a cell of `level`: a dirty one makes its parent dirty. */
__kernel void vct_dirty_parents(const VctGridParams grid, const uint level, const uint cells, __global uint* dirty) {
  uint c = get_global_id(0);
  if (c >= cells) return;
  vct_dirty_parent(&grid, level, c, dirty);
}

/* One work item a brick of `level` >= 1: the mips of the dirty ones. */
__kernel void vct_update_mip(const VctGridParams grid, const uint level, __global const uint* map, __global const uint4* bricks,
                             __global uint* radiance, __global const uint* positions, __global uint* dense,
                             __global const uint* dirty) {
  uint k = get_global_id(0);
  if (k >= grid.brick_offset[level + 1u] - grid.brick_offset[level]) return;
  VctGrid g = vct_grid_view(grid, map, bricks, radiance, dense);
  vct_update_mip_brick(&g, level, k, dirty, positions, radiance, dense);
}

/* One work item a pixel of a tile, both halves in one kernel; out holds the tile's pixels row by row
 * (RGBA8). The split pair below is the fast path; this one serves the AO reference output. */
__kernel void vct_tile(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const RenderSettings settings, const CameraParams camera,
                       const VctGridParams grid, __global const uint* map, __global const uint4* bricks,
                       __global const uint* radiance, __global const uint* dense, const VctSettings vct,
                       __global const VctLight* vct_lights,
                       const uint tile_x0, const uint tile_y0, const uint tile_w, const uint tile_h, __global uint* out) {
  uint x = get_global_id(0), y = get_global_id(1);
  if (x >= tile_w || y >= tile_h) return;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  VctGrid g = vct_grid_view(grid, map, bricks, radiance, dense);
  out[y * tile_w + x] = vct_pixel(&view, &ctx, &settings, &g, &vct, vct_lights, &camera, tile_x0 + x, tile_y0 + y);
}

/* The tile in two kernels, so the latency-bound kd-tree walk of the primary rays runs with the few
 * registers it needs rather than the cone tracing's. records: TS_VCT_SURFACE_PLANES planes of
 * tile_w * tile_h float4s (kernels/vct/vct_surface.h), pixels row by row. */
#ifndef TS_DEVICE_CPU
__kernel void vct_tile_primary(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const RenderSettings settings, const CameraParams camera,
                               const uint tile_x0, const uint tile_y0, const uint tile_w, const uint tile_h,
                               __global float4* records) {
  uint x = get_global_id(0), y = get_global_id(1);
  if (x >= tile_w || y >= tile_h) return;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  VctSurfaceRecord r = vct_pixel_surface(&view, &ctx, &settings, &camera, tile_x0 + x, tile_y0 + y);
  vct_surface_store(records, tile_w * tile_h, y * tile_w + x, &r);
}
#else
/* CPU devices: one work item per block of TS_PACKET_BLOCK_W x TS_PACKET_BLOCK_H pixels, whose primary
 * rays trace as one packet. Global size: ceil(tile_w / 2) x ceil(tile_h / 4). */
__kernel void vct_tile_primary(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const RenderSettings settings, const CameraParams camera,
                               const uint tile_x0, const uint tile_y0, const uint tile_w, const uint tile_h,
                               __global float4* records) {
  uint x0 = get_global_id(0) * TS_PACKET_BLOCK_W, y0 = get_global_id(1) * TS_PACKET_BLOCK_H, l;
  VctSurfaceRecord r[TS_SIMD_LANES];
  if (x0 >= tile_w || y0 >= tile_h) return;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  vct_block_surfaces(&view, &ctx, &settings, &camera, tile_x0 + x0, tile_y0 + y0, tile_x0 + tile_w, tile_y0 + tile_h, r);
  for (l = 0u; l < TS_SIMD_LANES; ++l)
    if (camera_block_inside(x0, y0, l, tile_w, tile_h))
      vct_surface_store(records, tile_w * tile_h, camera_block_y(y0, l) * tile_w + camera_block_x(x0, l), &r[l]);
}
#endif

/* The scene is still needed: hard shadows (presets 2 - 4) trace shadow rays. */
__kernel void vct_tile_shade(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const RenderSettings settings, const CameraParams camera,
                             const VctGridParams grid, __global const uint* map, __global const uint4* bricks,
                             __global const uint* radiance, __global const uint* dense, const VctSettings vct,
                             __global const VctLight* vct_lights, const uint tile_x0, const uint tile_y0, const uint tile_w,
                             const uint tile_h, __global const float4* records, __global uint* out) {
  uint x = get_global_id(0), y = get_global_id(1);
  if (x >= tile_w || y >= tile_h) return;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  VctGrid g = vct_grid_view(grid, map, bricks, radiance, dense);
  VctSurfaceRecord r = vct_surface_load(records, tile_w * tile_h, y * tile_w + x);
  out[y * tile_w + x] = vct_pixel_shade(&view, &ctx, &settings, &g, &vct, vct_lights, &camera, tile_x0 + x, tile_y0 + y, &r);
}

#ifndef TS_DEVICE_CPU
/* A batch of tiles a launch (GPU code path; CPU devices launch tile by tile). tiles: TS_BATCH_TILE_WORDS
 * words a tile (kernels/render/tile_batch.h); work item rows [t * rows_per_tile, (t + 1) * rows_per_tile)
 * are tile t; out (and records, `pixels` float4s a plane) hold the tiles' pixels at their offsets. Each
 * pixel is the one the per-tile kernels above give: vct_tiles as vct_tile, the split pair as theirs. */
__kernel void vct_tiles(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const RenderSettings settings, const CameraParams left,
                        const CameraParams right, const VctGridParams grid, __global const uint* map,
                        __global const uint4* bricks, __global const uint* radiance, __global const uint* dense,
                        const VctSettings vct, __global const VctLight* vct_lights, __global const uint* tiles,
                        const uint tile_count, const uint rows_per_tile, __global uint* out) {
  TileBatchItem it;
  if (!tile_batch_item(tiles, tile_count, rows_per_tile, get_global_id(0), get_global_id(1), &it)) return;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  VctGrid g = vct_grid_view(grid, map, bricks, radiance, dense);
  const CameraParams camera = it.eye ? right : left;
  out[it.index] = vct_pixel(&view, &ctx, &settings, &g, &vct, vct_lights, &camera, it.px, it.py);
}

__kernel void vct_tiles_primary(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const RenderSettings settings, const CameraParams left,
                                const CameraParams right, __global const uint* tiles, const uint tile_count,
                                const uint rows_per_tile, const uint pixels, __global float4* records) {
  TileBatchItem it;
  if (!tile_batch_item(tiles, tile_count, rows_per_tile, get_global_id(0), get_global_id(1), &it)) return;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  const CameraParams camera = it.eye ? right : left;
  VctSurfaceRecord r = vct_pixel_surface(&view, &ctx, &settings, &camera, it.px, it.py);
  vct_surface_store(records, pixels, it.index, &r);
}

__kernel void vct_tiles_shade(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const RenderSettings settings, const CameraParams left,
                              const CameraParams right, const VctGridParams grid, __global const uint* map,
                              __global const uint4* bricks, __global const uint* radiance, __global const uint* dense,
                              const VctSettings vct, __global const VctLight* vct_lights, __global const uint* tiles,
                              const uint tile_count, const uint rows_per_tile, const uint pixels,
                              __global const float4* records, __global uint* out) {
  TileBatchItem it;
  if (!tile_batch_item(tiles, tile_count, rows_per_tile, get_global_id(0), get_global_id(1), &it)) return;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  VctGrid g = vct_grid_view(grid, map, bricks, radiance, dense);
  const CameraParams camera = it.eye ? right : left;
  VctSurfaceRecord r = vct_surface_load(records, pixels, it.index);
  out[it.index] = vct_pixel_shade(&view, &ctx, &settings, &g, &vct, vct_lights, &camera, it.px, it.py, &r);
}
#endif
