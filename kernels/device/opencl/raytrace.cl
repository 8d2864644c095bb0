/* OpenCL entry points of the `raytrace` mode and of the ray benchmarks. */
#include "kernels/device/opencl/kernel_params.h"
#include "kernels/integrators/bench_rays.h"
#include "kernels/integrators/whitted.h"
#include "kernels/render/tile_batch.h"

#ifndef TS_DEVICE_CPU
/* One work item per pixel of a tile; out holds the tile's pixels row by row (RGBA8). */
__kernel void raytrace_tile(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const RenderSettings settings, const CameraParams camera,
                            const uint tile_x0, const uint tile_y0, const uint tile_w, const uint tile_h,
                            __global uint* out) {
  uint x = get_global_id(0), y = get_global_id(1);
  if (x >= tile_w || y >= tile_h) return;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  out[y * tile_w + x] = raytrace_pixel(&view, &ctx, &settings, &camera, tile_x0 + x, tile_y0 + y);
}

/* A batch of tiles in one launch (GPU code path; CPU devices launch tile by tile). tiles:
 * TS_BATCH_TILE_WORDS words a tile (kernels/render/tile_batch.h); work item rows
 * [t * rows_per_tile, (t + 1) * rows_per_tile) are tile t. Each pixel is the one raytrace_tile gives. */
__kernel void raytrace_tiles(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const RenderSettings settings, const CameraParams left,
                             const CameraParams right, __global const uint* tiles, const uint tile_count,
                             const uint rows_per_tile, __global uint* out) {
  TileBatchItem it;
  if (!tile_batch_item(tiles, tile_count, rows_per_tile, get_global_id(0), get_global_id(1), &it)) return;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  const CameraParams camera = it.eye ? right : left;
  out[it.index] = raytrace_pixel(&view, &ctx, &settings, &camera, it.px, it.py);
}
#else
/* CPU devices: one work item per block of TS_PACKET_BLOCK_W x TS_PACKET_BLOCK_H pixels of the tile,
 * whose primary rays trace as one packet. Global size: ceil(tile_w / 2) x ceil(tile_h / 4). */
__kernel void raytrace_tile(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const RenderSettings settings, const CameraParams camera,
                            const uint tile_x0, const uint tile_y0, const uint tile_w, const uint tile_h,
                            __global uint* out) {
  uint x0 = get_global_id(0) * TS_PACKET_BLOCK_W, y0 = get_global_id(1) * TS_PACKET_BLOCK_H, l;
  uint rgba[TS_SIMD_LANES];
  if (x0 >= tile_w || y0 >= tile_h) return;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  raytrace_block(&view, &ctx, &settings, &camera, tile_x0 + x0, tile_y0 + y0, tile_x0 + tile_w, tile_y0 + tile_h, rgba);
  for (l = 0u; l < TS_SIMD_LANES; ++l) {
    uint x = camera_block_x(x0, l), y = camera_block_y(y0, l);
    if (x < tile_w && y < tile_h) out[y * tile_w + x] = rgba[l];
  }
}

#endif

/* Ray benchmark, primary rays: closest hit for every pixel of the full image. */
__kernel void bench_primary(TS_SCENE_PARAMS, const CameraParams camera, __global float4* hits) {
  uint x = get_global_id(0), y = get_global_id(1);
  if (x >= camera.width || y >= camera.height) return;
  TS_SCENE_VIEW(view);
  hits[y * camera.width + x] = bench_trace_primary(&view, &camera, x, y);
}

/* Ray benchmark, shadow rays from the primary hits toward a point. */
__kernel void bench_shadow(TS_SCENE_PARAMS, const CameraParams camera, __global const float4* hits, const float lx,
                           const float ly, const float lz, __global uint* occluded) {
  uint x = get_global_id(0), y = get_global_id(1);
  if (x >= camera.width || y >= camera.height) return;
  TS_SCENE_VIEW(view);
  uint i = y * camera.width + x;
  occluded[i] = bench_trace_shadow(&view, &camera, x, y, hits[i], make_float3(lx, ly, lz));
}

/* Ray benchmark, one cosine-distributed diffuse bounce from the primary hits. */
__kernel void bench_diffuse(TS_SCENE_PARAMS, const CameraParams camera, __global const float4* hits, const uint seed,
                            __global float4* bounce_hits) {
  uint x = get_global_id(0), y = get_global_id(1);
  if (x >= camera.width || y >= camera.height) return;
  TS_SCENE_VIEW(view);
  uint i = y * camera.width + x;
  bounce_hits[i] = bench_trace_diffuse(&view, &camera, x, y, hits[i], seed);
}

#ifdef TS_DEVICE_CPU
/* CPU devices: primary and shadow benchmark rays of a block of 2 x 4 pixels per work item, traced as
 * one packet (kernels/integrators/bench_rays.h). Global size: ceil(width / 2) x ceil(height / 4). */
__kernel void bench_primary_block(TS_SCENE_PARAMS, const CameraParams camera, __global float4* hits) {
  uint x0 = get_global_id(0) * TS_PACKET_BLOCK_W, y0 = get_global_id(1) * TS_PACKET_BLOCK_H;
  if (x0 >= camera.width || y0 >= camera.height) return;
  TS_SCENE_VIEW(view);
  bench_trace_primary_block(&view, &camera, x0, y0, hits);
}

__kernel void bench_shadow_block(TS_SCENE_PARAMS, const CameraParams camera, __global const float4* hits, const float lx,
                                 const float ly, const float lz, __global uint* occluded) {
  uint x0 = get_global_id(0) * TS_PACKET_BLOCK_W, y0 = get_global_id(1) * TS_PACKET_BLOCK_H;
  if (x0 >= camera.width || y0 >= camera.height) return;
  TS_SCENE_VIEW(view);
  bench_trace_shadow_block(&view, &camera, x0, y0, hits, make_float3(lx, ly, lz), occluded);
}
#endif
