/* OpenCL entry points of the `pathtrace` mode (Algorithm 5 of Kim & Sung 2021, the part that
 * traces; merging into a tile's sums and resolving it are pathtrace_accumulate.cl, or the host's
 * when launches are read back, see worker/render/pathtrace_renderer.h).
 * A sample of a tile is two launches: pathtrace_primary (first hits of every pixel of both eyes),
 * then pathtrace_paths (the paths, reprojecting through the other eye's first hits). Work items:
 * global (tile_w, tile_h * eye_count); rows [0, tile_h) are the left eye (or the only one).
 * pathtrace_primary_tiles and pathtrace_paths_tiles do the same for a batch of tile pairs in one
 * launch (the GPU code path, worker/render/pathtrace_tile_batch.h). */
#include "kernels/device/opencl/kernel_params.h"
#include "kernels/integrators/pathtrace.h"
#include "kernels/render/tile_batch.h"

/* Zeroes `count` 32-bit words (sums before a launch). */
__kernel void pathtrace_clear(__global uint* values, const uint count) {
  uint i = get_global_id(0);
  if (i < count) values[i] = 0u;
}

__kernel void pathtrace_primary(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const RenderSettings settings,
                                const PathTraceParams pt, const CameraParams left, const CameraParams right,
                                __global PtPrimary* primaries, __global PtPixelOut* own) {
  uint x = get_global_id(0), y = get_global_id(1);
  uint eye, ty, i;
  if (x >= pt.tile_w || y >= pt.tile_h * pt.eye_count) return;
  eye = y / pt.tile_h;
  ty = y - eye * pt.tile_h;
  i = eye * pt.tile_w * pt.tile_h + ty * pt.tile_w + x;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  pt_primary_pixel(&view, &ctx, &settings, &pt, eye ? &right : &left, eye, x, ty, primaries + i, own + i);
}

/* own: PtPixelOut per pixel and eye (added to); reproj: float4 (r, g, b, count) per pixel and eye. */
__kernel void pathtrace_paths(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const RenderSettings settings,
                              const PathTraceParams pt, const CameraParams left, const CameraParams right,
                              __global const PtPrimary* primaries, __global PtPixelOut* own, __global float* reproj) {
  uint x = get_global_id(0), y = get_global_id(1);
  uint eye, other, ty, n = pt.tile_w * pt.tile_h;
  if (x >= pt.tile_w || y >= pt.tile_h * pt.eye_count) return;
  eye = y / pt.tile_h;
  other = pt.eye_count > 1u ? 1u - eye : 0u;
  ty = y - eye * pt.tile_h;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  pt_path_pixel(&view, &ctx, &settings, &pt, eye ? &right : &left, eye ? &left : &right, eye, x, ty, primaries + eye * n,
                primaries + other * n, own + eye * n + ty * pt.tile_w + x, (volatile __global float*)(reproj + 4u * other * n));
}

/* A work item of a batch launch. tiles: the tile list of kernels/render/tile_batch.h with an entry
 * per eye of each tile pair (eye 0's pixels at the pair's first index in the batch's buffers, eye
 * 1's right after them), followed by one word per entry: the sample index of the batch's first
 * sample in that tile. `sample` counts from there. *p becomes the tile's PathTraceParams, as
 * pathtrace_primary and pathtrace_paths get them for that tile alone; *pair its first index. */
inline int pt_batch_item(__global const uint* tiles, const uint tile_count, const uint rows_per_tile, const uint sample,
                         const PathTraceParams* pt, PathTraceParams* p, TileBatchItem* it, uint* pair) {
  uint gy = get_global_id(1), t = gy / rows_per_tile;
  __global const uint* tile;
  if (!tile_batch_item(tiles, tile_count, rows_per_tile, get_global_id(0), gy, it)) return 0;
  tile = tiles + t * TS_BATCH_TILE_WORDS;
  *p = *pt;
  p->tile_x0 = tile[0];
  p->tile_y0 = tile[1];
  p->tile_w = tile[2];
  p->tile_h = tile[3];
  p->first_sample = tiles[tile_count * TS_BATCH_TILE_WORDS + t] + sample;
  *pair = tile[5] - it->eye * tile[2] * tile[3];
  return 1;
}

__kernel void pathtrace_primary_tiles(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const RenderSettings settings,
                                      const PathTraceParams pt, const CameraParams left, const CameraParams right,
                                      __global const uint* tiles, const uint tile_count, const uint rows_per_tile,
                                      const uint sample, __global PtPrimary* primaries, __global PtPixelOut* own) {
  PathTraceParams p;
  TileBatchItem it;
  uint pair;
  if (!pt_batch_item(tiles, tile_count, rows_per_tile, sample, &pt, &p, &it, &pair)) return;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  pt_primary_pixel(&view, &ctx, &settings, &p, it.eye ? &right : &left, it.eye, it.px - p.tile_x0, it.py - p.tile_y0,
                   primaries + it.index, own + it.index);
}

__kernel void pathtrace_paths_tiles(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const RenderSettings settings,
                                    const PathTraceParams pt, const CameraParams left, const CameraParams right,
                                    __global const uint* tiles, const uint tile_count, const uint rows_per_tile,
                                    const uint sample, __global const PtPrimary* primaries, __global PtPixelOut* own,
                                    __global float* reproj) {
  PathTraceParams p;
  TileBatchItem it;
  uint pair, n, other;
  if (!pt_batch_item(tiles, tile_count, rows_per_tile, sample, &pt, &p, &it, &pair)) return;
  n = p.tile_w * p.tile_h;
  other = p.eye_count > 1u ? 1u - it.eye : 0u;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  pt_path_pixel(&view, &ctx, &settings, &p, it.eye ? &right : &left, it.eye ? &left : &right, it.eye, it.px - p.tile_x0,
                it.py - p.tile_y0, primaries + pair + it.eye * n, primaries + pair + other * n, own + it.index,
                (volatile __global float*)(reproj + 4u * (pair + other * n)));
}
