/* OpenCL entry points of the `raytrace` mode, of every mode's depth and coverage pass, and of the
 * ray benchmarks. */
#include "kernels/device/opencl/kernel_params.h"
#include "kernels/integrators/bench_rays.h"
#include "kernels/integrators/primary_aux.h"
#include "kernels/integrators/whitted.h"
#include "kernels/render/ordered_groups.h"
#include "kernels/render/persistent_groups.h"
#include "kernels/render/ray_octant_sort.h"
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

/* Depth and coverage of a batch of tiles (kernels/integrators/primary_aux.h), laid out as
 * raytrace_tiles lays out its pixels; one launch a batch on every device (one primary ray a pixel
 * and shadow rays only on the shadow catcher: cheap enough that CPU devices gain nothing from
 * packets here). out: one aux_pack word a pixel. */
__kernel void primary_aux_tiles(TS_SCENE_PARAMS, TS_SHADING_PARAMS, const RenderSettings settings, const AuxSettings aux,
                                const CameraParams left, const CameraParams right, __global const uint* tiles,
                                const uint tile_count, const uint rows_per_tile, __global uint* out) {
  TileBatchItem it;
  if (!tile_batch_item(tiles, tile_count, rows_per_tile, get_global_id(0), get_global_id(1), &it)) return;
  TS_SCENE_VIEW(view);
  TS_SHADING_CONTEXT(ctx);
  const CameraParams camera = it.eye ? right : left;
  out[it.index] = primary_aux_pixel(&view, &ctx, &settings, &aux, &camera, it.px, it.py);
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
  occluded[i] = bench_trace_shadow(&view, &camera, x, y, hits[i], make_float3(lx, ly, lz), TS_BENCH_SHADOW_FACING);
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

/* The same three ray kinds with persistent work-groups (kernels/render/persistent_groups.h): launch
 * about as many work-groups as the device holds at once; next_group is zeroed before each launch.
 * Each work item traces the ray the kernels above give its pixel. */
__kernel void bench_primary_persistent(TS_SCENE_PARAMS, const CameraParams camera, __global float4* hits,
                                       volatile __global uint* next_group) {
  __local uint slot;
  uint gx = persistent_groups(camera.width, 0), g;
  TS_SCENE_VIEW(view);
  while (persistent_next_group(next_group, &slot, gx * persistent_groups(camera.height, 1), &g)) {
    uint x = persistent_item(g % gx, 0), y = persistent_item(g / gx, 1);
    if (x < camera.width && y < camera.height) hits[y * camera.width + x] = bench_trace_primary(&view, &camera, x, y);
  }
}

__kernel void bench_shadow_persistent(TS_SCENE_PARAMS, const CameraParams camera, __global const float4* hits,
                                      const float lx, const float ly, const float lz, __global uint* occluded,
                                      volatile __global uint* next_group) {
  __local uint slot;
  uint gx = persistent_groups(camera.width, 0), g;
  TS_SCENE_VIEW(view);
  while (persistent_next_group(next_group, &slot, gx * persistent_groups(camera.height, 1), &g)) {
    uint x = persistent_item(g % gx, 0), y = persistent_item(g / gx, 1), i = y * camera.width + x;
    if (x < camera.width && y < camera.height)
      occluded[i] = bench_trace_shadow(&view, &camera, x, y, hits[i], make_float3(lx, ly, lz), TS_BENCH_SHADOW_FACING);
  }
}

__kernel void bench_diffuse_persistent(TS_SCENE_PARAMS, const CameraParams camera, __global const float4* hits,
                                       const uint seed, __global float4* bounce_hits, volatile __global uint* next_group) {
  __local uint slot;
  uint gx = persistent_groups(camera.width, 0), g;
  TS_SCENE_VIEW(view);
  while (persistent_next_group(next_group, &slot, gx * persistent_groups(camera.height, 1), &g)) {
    uint x = persistent_item(g % gx, 0), y = persistent_item(g / gx, 1), i = y * camera.width + x;
    if (x < camera.width && y < camera.height) bounce_hits[i] = bench_trace_diffuse(&view, &camera, x, y, hits[i], seed);
  }
}

/* Diffuse bounces of a work-group's block of pixels traced in direction-octant order
 * (kernels/render/ray_octant_sort.h), the sort inside the timed kernel; the same ray and record
 * per pixel as bench_diffuse. At most TS_RAY_SORT_MAX_GROUP work items a group. */
__kernel void bench_diffuse_sorted(TS_SCENE_PARAMS, const CameraParams camera, __global const float4* hits,
                                   const uint seed, __global float4* bounce_hits) {
  __local uchar keys[TS_RAY_SORT_MAX_GROUP];
  __local uint pixel_of[TS_RAY_SORT_MAX_GROUP];
  __local float4 org_of[TS_RAY_SORT_MAX_GROUP], dir_of[TS_RAY_SORT_MAX_GROUP];
  uint x = get_global_id(0), y = get_global_id(1);
  uint n = (uint)(get_local_size(0) * get_local_size(1)), i = (uint)(get_local_id(1) * get_local_size(0) + get_local_id(0));
  uint inside = x < camera.width && y < camera.height, rank;
  float3 org = make_float3(0.0f, 0.0f, 0.0f), dir = org;
  Hit hit;
  TS_SCENE_VIEW(view);
  int has_ray = inside && bench_diffuse_ray(&view, &camera, x, y, hits[y * camera.width + x], seed, bench_epsilon(&view), &org, &dir);
  keys[i] = has_ray ? ray_octant(dir) : TS_RAY_SORT_NO_RAY;
  barrier(CLK_LOCAL_MEM_FENCE);
  rank = ray_sort_rank(keys, n, i);
  pixel_of[rank] = inside ? y * camera.width + x : 0xFFFFFFFFu;
  org_of[rank] = make_float4(org.x, org.y, org.z, has_ray ? 1.0f : 0.0f);
  dir_of[rank] = make_float4(dir.x, dir.y, dir.z, 0.0f);
  barrier(CLK_LOCAL_MEM_FENCE);
  /* from here on, work item i traces the ray of rank i */
  if (pixel_of[i] == 0xFFFFFFFFu) return;
  if (org_of[i].w == 0.0f) {
    bounce_hits[pixel_of[i]] = make_float4(-2.0f, 0.0f, 0.0f, 0.0f); /* as bench_trace_diffuse: no ray */
    return;
  }
  bounce_hits[pixel_of[i]] = bench_hit_record(
      kd_intersect_closest(&view, org_of[i].xyz, dir_of[i].xyz, 0.0f, TS_INFINITY, &hit), &hit);
}

/* The same three ray kinds with the work-groups in a given order and their costs recorded
 * (kernels/render/ordered_groups.h, `tessera-bench rays --schedule longest-first`): 8 x 8 groups
 * as in the grid launch, each work item tracing its pixel's ray; costs holds a slot per group
 * and the clock. */
#define TS_BENCH_ORDERED_BEGIN                                                                          \
  uint groups_x = persistent_groups(camera.width, 0), group_count = groups_x * persistent_groups(camera.height, 1); \
  uint g = ordered_group(order), x = persistent_item(g % groups_x, 0), y = persistent_item(g / groups_x, 1); \
  uint ticket = ordered_group_start(costs, group_count);                                                \
  TS_SCENE_VIEW(view); /* __local stacks are declared at the kernel's outermost scope */               \
  if (x < camera.width && y < camera.height)

__kernel void bench_primary_ordered(TS_SCENE_PARAMS, const CameraParams camera, __global float4* hits,
                                    __global const uint* order, volatile __global uint* costs) {
  TS_BENCH_ORDERED_BEGIN {
    hits[y * camera.width + x] = bench_trace_primary(&view, &camera, x, y);
  }
  ordered_group_end(costs, group_count, g, ticket);
}

__kernel void bench_shadow_ordered(TS_SCENE_PARAMS, const CameraParams camera, __global const float4* hits,
                                   const float lx, const float ly, const float lz, __global uint* occluded,
                                   __global const uint* order, volatile __global uint* costs) {
  TS_BENCH_ORDERED_BEGIN {
    uint i = y * camera.width + x;
    occluded[i] = bench_trace_shadow(&view, &camera, x, y, hits[i], make_float3(lx, ly, lz), TS_BENCH_SHADOW_FACING);
  }
  ordered_group_end(costs, group_count, g, ticket);
}

__kernel void bench_diffuse_ordered(TS_SCENE_PARAMS, const CameraParams camera, __global const float4* hits,
                                    const uint seed, __global float4* bounce_hits, __global const uint* order,
                                    volatile __global uint* costs) {
  TS_BENCH_ORDERED_BEGIN {
    uint i = y * camera.width + x;
    bounce_hits[i] = bench_trace_diffuse(&view, &camera, x, y, hits[i], seed);
  }
  ordered_group_end(costs, group_count, g, ticket);
}

/* Stored rays (`tessera-bench rays --rays stored`), the way batch kernels of other tracers take
 * them: an untimed kernel writes each pixel's ray (bench_store_ray in kernels/integrators/bench_rays.h,
 * two float4 a pixel), and the timed kernel only reads and traces it. The very rays, and so the very
 * hit records, of the kernels above. */
__kernel void bench_store_primary_rays(TS_SCENE_PARAMS, const CameraParams camera, __global float4* rays) {
  uint x = get_global_id(0), y = get_global_id(1);
  if (x >= camera.width || y >= camera.height) return;
  TS_SCENE_VIEW(view);
  bench_store_ray(rays, y * camera.width + x, 1, camera_origin(&camera),
                  camera_direction(&camera, (float)x + 0.5f, (float)y + 0.5f), TS_INFINITY);
}

__kernel void bench_store_shadow_rays(TS_SCENE_PARAMS, const CameraParams camera, __global const float4* hits,
                                      const float lx, const float ly, const float lz, __global float4* rays) {
  uint x = get_global_id(0), y = get_global_id(1), i;
  float3 org = make_float3(0.0f, 0.0f, 0.0f), dir = org;
  if (x >= camera.width || y >= camera.height) return;
  TS_SCENE_VIEW(view);
  i = y * camera.width + x;
  bench_store_ray(rays, i, bench_shadow_ray(&view, &camera, x, y, hits[i], make_float3(lx, ly, lz), bench_epsilon(&view), TS_BENCH_SHADOW_FACING, &org, &dir),
                  org, dir, TS_BENCH_SHADOW_TMAX);
}

__kernel void bench_store_diffuse_rays(TS_SCENE_PARAMS, const CameraParams camera, __global const float4* hits,
                                       const uint seed, __global float4* rays) {
  uint x = get_global_id(0), y = get_global_id(1), i;
  float3 org = make_float3(0.0f, 0.0f, 0.0f), dir = org;
  if (x >= camera.width || y >= camera.height) return;
  TS_SCENE_VIEW(view);
  i = y * camera.width + x;
  bench_store_ray(rays, i, bench_diffuse_ray(&view, &camera, x, y, hits[i], seed, bench_epsilon(&view), &org, &dir), org,
                  dir, TS_INFINITY);
}

/* Closest hits of stored rays: hits[i] as bench_primary / bench_diffuse write it (a pixel without a
 * ray gets the diffuse kernel's "no ray" record). */
__kernel void bench_trace_stored_closest(TS_SCENE_PARAMS, const uint width, const uint height, __global const float4* rays,
                                         __global float4* hits) {
  uint x = get_global_id(0), y = get_global_id(1), i;
  float4 o, d;
  Hit hit;
  if (x >= width || y >= height) return;
  TS_SCENE_VIEW(view);
  i = y * width + x;
  o = rays[2u * i];
  d = rays[2u * i + 1u];
  hits[i] = o.w < 0.0f ? make_float4(-2.0f, 0.0f, 0.0f, 0.0f)
                       : bench_hit_record(kd_intersect_closest(&view, o.xyz, d.xyz, 0.0f, o.w, &hit), &hit);
}

/* Any hit of stored rays: occluded[i] as bench_shadow writes it. */
__kernel void bench_trace_stored_any(TS_SCENE_PARAMS, const uint width, const uint height, __global const float4* rays,
                                     __global uint* occluded) {
  uint x = get_global_id(0), y = get_global_id(1), i;
  float4 o, d;
  if (x >= width || y >= height) return;
  TS_SCENE_VIEW(view);
  i = y * width + x;
  o = rays[2u * i];
  d = rays[2u * i + 1u];
  occluded[i] = o.w < 0.0f ? 2u : (uint)kd_intersect_any(&view, o.xyz, d.xyz, 0.0f, o.w);
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
  bench_trace_shadow_block(&view, &camera, x0, y0, hits, make_float3(lx, ly, lz), TS_BENCH_SHADOW_FACING, occluded);
}
#endif
