/* The three ray kinds of `tessera-bench rays`: primary rays from a fixed camera, shadow rays from
 * their hits toward a point light, and one cosine-distributed diffuse bounce. The ray generators
 * are shared with the host so a CPU peer (Embree) can trace the very same rays. A hit is stored as
 * float4(t, triangle bits, u, v) with t < 0 for a miss. */
#ifndef TESSERA_KERNELS_INTEGRATORS_BENCH_RAYS_H
#define TESSERA_KERNELS_INTEGRATORS_BENCH_RAYS_H
#include "kernels/accel/scene_trace.h"
#include "kernels/render/camera_packet.h"
#include "kernels/render/camera.h"
#include "kernels/render/rng.h"

TS_FN float4 bench_hit_record(int found, const Hit* hit) {
  return found ? make_float4(hit->t, ts_as_float(hit->tri), hit->u, hit->v) : make_float4(-1.0f, 0.0f, 0.0f, 0.0f);
}

TS_FN float4 bench_trace_primary(const SceneView* scene, const CameraParams* cam, uint x, uint y) {
  Hit hit;
  float3 dir = camera_direction(cam, (float)x + 0.5f, (float)y + 0.5f);
  int found = scene_intersect_closest(scene, camera_origin(cam), dir, 0.0f, TS_INFINITY, &hit);
  return bench_hit_record(found, &hit);
}

/* Hit point and the triangle's geometric normal facing the camera ray. */
TS_FN float3 bench_hit_point(const SceneView* scene, const CameraParams* cam, uint x, uint y, float4 rec, float3* normal) {
  float3 dir = camera_direction(cam, (float)x + 0.5f, (float)y + 0.5f);
  float3 p0, p1, p2, n;
  scene_triangle_vertices(scene, ts_as_uint(rec.y), &p0, &p1, &p2);
  n = v3_normalize(v3_cross(v3_sub(p1, p0), v3_sub(p2, p0)));
  if (v3_dot(n, dir) > 0.0f) n = v3_neg(n);
  *normal = n;
  return v3_madd(camera_origin(cam), dir, rec.x);
}

/* Which pixels cast a shadow ray (`tessera-bench rays --shadow-rays`): every pixel with a primary hit
 * (facing_only 0), or only those whose surface faces the light (1) — the rays the renderers cast, which
 * skip a light behind the surface (kernels/integrators/direct_light.h). OpenCL programs take it at
 * build time, so the default kernels hold no test. */
#ifndef TS_BENCH_SHADOW_FACING
#define TS_BENCH_SHADOW_FACING 0
#endif

/* Shadow ray of pixel (x, y): returns 0 when the pixel casts none. */
TS_FN int bench_shadow_ray(const SceneView* scene, const CameraParams* cam, uint x, uint y, float4 rec, float3 light,
                           float eps, int facing_only, float3* org, float3* dir) {
  float3 n;
  if (rec.x < 0.0f) return 0;
  *org = v3_madd(bench_hit_point(scene, cam, x, y, rec, &n), n, eps);
  *dir = v3_sub(light, *org); /* t in (0, 1) reaches the light */
  return !facing_only || v3_dot(n, *dir) > 0.0f;
}

/* Cosine-distributed direction around the hit's normal (Malley's method). */
TS_FN int bench_diffuse_ray(const SceneView* scene, const CameraParams* cam, uint x, uint y, float4 rec, uint seed,
                            float eps, float3* org, float3* dir) {
  float3 n, t, b;
  Rng rng;
  float u1, u2, r, phi;
  if (rec.x < 0.0f) return 0;
  *org = v3_madd(bench_hit_point(scene, cam, x, y, rec, &n), n, eps);
  t = ts_fabs(n.x) > 0.5f ? make_float3(0.0f, 1.0f, 0.0f) : make_float3(1.0f, 0.0f, 0.0f);
  t = v3_normalize(v3_cross(t, n));
  b = v3_cross(n, t);
  rng = rng_make(y * cam->width + x, 1u, seed);
  u1 = rng_next(&rng);
  u2 = rng_next(&rng);
  r = ts_sqrt(u1);
  phi = 6.2831853f * u2;
  *dir = v3_add(v3_add(v3_scale(t, r * ts_cos(phi)), v3_scale(b, r * ts_sin(phi))), v3_scale(n, ts_sqrt(ts_fmax(0.0f, 1.0f - u1))));
  return 1;
}

/* The seed of the diffuse bounces: the timed kernels, the Embree peer and the host counts of
 * --stats all trace the same rays. */
#define TS_BENCH_DIFFUSE_SEED 7u

/* Offset of secondary ray origins: a small fraction of the scene's size. */
TS_FN float bench_epsilon(const SceneView* s) {
  float3 d = make_float3(s->bounds_max_x - s->bounds_min_x, s->bounds_max_y - s->bounds_min_y, s->bounds_max_z - s->bounds_min_z);
  return 1e-5f * v3_length(d);
}

/* A shadow ray's segment ends just before the light. */
#define TS_BENCH_SHADOW_TMAX 0.9999f

TS_FN uint bench_trace_shadow(const SceneView* scene, const CameraParams* cam, uint x, uint y, float4 rec, float3 light,
                              int facing_only) {
  float3 org, dir;
  if (!bench_shadow_ray(scene, cam, x, y, rec, light, bench_epsilon(scene), facing_only, &org, &dir)) return 2u; /* no ray */
  return (uint)scene_intersect_any(scene, org, dir, 0.0f, TS_BENCH_SHADOW_TMAX);
}

#ifdef TS_DEVICE_OPENCL
/* A stored ray (`tessera-bench rays --rays stored`): rays[2 i] = origin | tmax, rays[2 i + 1] =
 * direction | 0; tmax < 0 marks a pixel without a ray. tmin is 0. */
TS_FN void bench_store_ray(__global float4* rays, uint i, int has_ray, float3 org, float3 dir, float tmax) {
  rays[2u * i] = make_float4(org.x, org.y, org.z, has_ray ? tmax : -1.0f);
  rays[2u * i + 1u] = make_float4(dir.x, dir.y, dir.z, 0.0f);
}
#endif

TS_FN float4 bench_trace_diffuse(const SceneView* scene, const CameraParams* cam, uint x, uint y, float4 rec, uint seed) {
  float3 org, dir;
  Hit hit;
  if (!bench_diffuse_ray(scene, cam, x, y, rec, seed, bench_epsilon(scene), &org, &dir)) return make_float4(-2.0f, 0.0f, 0.0f, 0.0f);
  return bench_hit_record(scene_intersect_closest(scene, org, dir, 0.0f, TS_INFINITY, &hit), &hit);
}

#ifdef TS_KD_CPU
/* CPU devices trace the same rays in blocks of TS_PACKET_BLOCK_W x TS_PACKET_BLOCK_H pixels, each
 * block's primary or shadow rays as one packet (kernels/render/camera_packet.h), with the same hits as
 * the functions above. hits and occluded are whole images, row by row. Diffuse bounces stay single
 * rays: sorted into packets by direction octant (8 x 8 blocks) they measured no faster, the rays of a
 * packet part too soon. */
TS_FN void bench_trace_primary_block(const SceneView* scene, const CameraParams* cam, uint x0, uint y0, TS_GLOBAL float4* hits) {
  KdPacket rays;
  Hit hit[TS_SIMD_LANES];
  uint l;
  camera_block_hits(scene, cam, x0, y0, cam->width, cam->height, &rays, hit);
  for (l = 0u; l < TS_SIMD_LANES; ++l)
    if (camera_block_inside(x0, y0, l, cam->width, cam->height))
      hits[camera_block_y(y0, l) * cam->width + camera_block_x(x0, l)] =
          bench_hit_record(hit[l].tri != TS_KD_NO_TRIANGLE, &hit[l]);
}

TS_FN void bench_trace_shadow_block(const SceneView* scene, const CameraParams* cam, uint x0, uint y0,
                                    TS_GLOBAL const float4* hits, float3 light, int facing_only, TS_GLOBAL uint* occluded) {
  KdPacket rays;
  Hit hit[TS_SIMD_LANES];
  int found[TS_SIMD_LANES], has_ray[TS_SIMD_LANES];
  float eps = bench_epsilon(scene);
  uint l;
  for (l = 0u; l < TS_SIMD_LANES; ++l) {
    uint x = camera_block_x(x0, l), y = camera_block_y(y0, l);
    has_ray[l] = camera_block_inside(x0, y0, l, cam->width, cam->height) &&
                 bench_shadow_ray(scene, cam, x, y, hits[y * cam->width + x], light, eps, facing_only, &rays.org[l], &rays.dir[l]);
    if (!has_ray[l]) rays.org[l] = rays.dir[l] = make_float3(0.0f, 0.0f, 0.0f);
    rays.tmin[l] = 0.0f;
    rays.tmax[l] = has_ray[l] ? 0.9999f : -1.0f;
  }
  scene_trace_packet(scene, &rays, 1, found, hit);
  for (l = 0u; l < TS_SIMD_LANES; ++l)
    if (camera_block_inside(x0, y0, l, cam->width, cam->height))
      occluded[camera_block_y(y0, l) * cam->width + camera_block_x(x0, l)] = has_ray[l] ? (uint)found[l] : 2u;
}
#endif

#endif
