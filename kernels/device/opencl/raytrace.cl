/* OpenCL entry points of the `raytrace` mode and of the ray benchmarks. */
#include "kernels/device/opencl/kernel_params.h"
#include "kernels/integrators/bench_rays.h"
#include "kernels/integrators/whitted.h"

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
/* CPU devices: primary and shadow benchmark rays of a 2 x 2 pixel block per work item, traced as
 * one packet (kernels/accel/kdtree_packet.h). Global size: ceil(width / 2) x ceil(height / 2). */
__kernel void bench_primary_block(TS_SCENE_PARAMS, const CameraParams camera, __global float4* hits) {
  uint x0 = get_global_id(0) * TS_BENCH_BLOCK, y0 = get_global_id(1) * TS_BENCH_BLOCK, l;
  float4 rec[TS_SIMD_LANES];
  if (x0 >= camera.width || y0 >= camera.height) return;
  TS_SCENE_VIEW(view);
  bench_trace_primary_block(&view, &camera, x0, y0, rec);
  for (l = 0u; l < TS_SIMD_LANES; ++l)
    if (bench_block_inside(&camera, x0, y0, l)) hits[bench_block_y(y0, l) * camera.width + bench_block_x(x0, l)] = rec[l];
}

__kernel void bench_shadow_block(TS_SCENE_PARAMS, const CameraParams camera, __global const float4* hits, const float lx,
                                 const float ly, const float lz, __global uint* occluded) {
  uint x0 = get_global_id(0) * TS_BENCH_BLOCK, y0 = get_global_id(1) * TS_BENCH_BLOCK, l;
  float4 rec[TS_SIMD_LANES];
  uint out[TS_SIMD_LANES];
  if (x0 >= camera.width || y0 >= camera.height) return;
  TS_SCENE_VIEW(view);
  for (l = 0u; l < TS_SIMD_LANES; ++l)
    rec[l] = bench_block_inside(&camera, x0, y0, l) ? hits[bench_block_y(y0, l) * camera.width + bench_block_x(x0, l)]
                                                    : make_float4(-1.0f, 0.0f, 0.0f, 0.0f);
  bench_trace_shadow_block(&view, &camera, x0, y0, rec, make_float3(lx, ly, lz), out);
  for (l = 0u; l < TS_SIMD_LANES; ++l)
    if (bench_block_inside(&camera, x0, y0, l)) occluded[bench_block_y(y0, l) * camera.width + bench_block_x(x0, l)] = out[l];
}
#endif
