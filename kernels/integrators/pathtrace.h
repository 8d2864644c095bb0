/* The `pathtrace` mode: a stereo VR path tracer after Kim & Sung 2021 (papers/004_*, §3.2-3.4,
 * Algorithm 3), shared by the OpenCL entry points (kernels/device/opencl/pathtrace.cl) and the host
 * backend (kernels/device/cpu/pathtrace_cpu.cpp).
 *
 * One sample of one pixel of one eye is a path with next-event estimation: at every diffuse vertex
 * direct_light() samples point/directional lights and emissive triangles; emission found by a
 * bounce counts only after a mirror or glass bounce (or at the primary hit), so nothing is counted
 * twice. Mirrors reflect, glass reflects or refracts by Fresnel, diffuse bounces are cosine
 * distributed. Russian roulette on the throughput from vertex rr_depth on (both variants).
 *
 * The proposed variant adds, per the paper:
 *  - Reprojection (§3.2, Algorithm 3 lines 9-25, 38-40): the first opaque hit P_c is stored. If it
 *    is diffuse (or emissive), it is projected onto the other eye's image plane (Eq. 5); when the
 *    point lies inside the tile and the other eye sees it, the path's radiance, once known, is
 *    added as an extra sample to that pixel of the other eye (Lambertian radiance does not depend
 *    on the viewing direction). Whether the other eye sees P_c is read from that eye's first hits
 *    of the same sample (a sample runs in two phases: first hits of every pixel of both eyes, then
 *    the paths): the target pixel saw the same triangle, or the same material at P_c's distance
 *    within two pixel footprints — no extra ray. TS_PT_VISIBILITY_RAY tests with a shadow ray
 *    from P_c to the other eye instead (exact, about 10 % slower). If the first hit is a mirror,
 *    the reflected direction is followed (Eq. 6): the next vertex Q (diffuse or emissive) is
 *    mirrored in the tangent plane to a virtual point whose projection into the other eye is
 *    refined on the mirror's actual surface, then the other eye's ray is checked to reach Q.
 *  - Gaze-based stopping (§3.3, Eq. 7): at vertices deeper than T_d a path stops with probability
 *    P_d = clamp(d / d_max, 0, P_max), d the pixel's distance from the gaze point.
 * The median filter for early-stopped pixels (§3.4) runs when a tile is resolved
 * (kernels/integrators/pathtrace_resolve.h). */
#ifndef TESSERA_KERNELS_INTEGRATORS_PATHTRACE_H
#define TESSERA_KERNELS_INTEGRATORS_PATHTRACE_H
#include "kernels/accel/scene_trace.h"
#include "kernels/integrators/direct_light.h"
#include "kernels/integrators/pathtrace_params.h"
#include "kernels/integrators/whitted.h"
#include "kernels/render/camera.h"

#define TS_PT_MAX_SEGMENTS 64   /* bounds a path's work, pass-throughs of cut-out texels included */
#define TS_PT_MIRROR_ITERATIONS 3
#define TS_PT_NO_TARGET 0xFFFFFFFFu

/* Adds v to *p atomically (reprojected samples of many pixels may land on one pixel). */
#ifdef TS_DEVICE_OPENCL
TS_FN void pt_atomic_add(volatile __global float* p, float v) {
  volatile __global uint* u = (volatile __global uint*)p;
  uint expected = *u;
  for (;;) {
    uint old = atomic_cmpxchg(u, expected, as_uint(as_float(expected) + v));
    if (old == expected) break;
    expected = old;
  }
}
#else
TS_FN void pt_atomic_add(float* p, float v) {
  float expected, desired;
  __atomic_load(p, &expected, __ATOMIC_RELAXED);
  do {
    desired = expected + v;
  } while (!__atomic_compare_exchange(p, &expected, &desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}
#endif

/* Eq. 7: the probability that a path of the pixel at (px, py) stops at a vertex deeper than T_d. */
TS_FN float pt_stop_probability(const PathTraceParams* pt, float px, float py) {
  float dx = px - pt->gaze_x, dy = py - pt->gaze_y;
  float p = ts_sqrt(dx * dx + dy * dy) * pt->inv_d_max;
  return ts_fmin(ts_fmax(p, 0.0f), pt->p_max);
}

/* Eq. 1-5: where the segment from point pc to the eye of `cam` crosses that eye's image plane
 * (the plane at unit distance along the viewing direction, normal n = forward), in pixels of the
 * eye image. Returns 0 when pc is not in front of the eye. */
TS_FN int pt_project(const CameraParams* cam, float3 pc, float* x, float* y) {
  float3 pre = camera_origin(cam); /* P_re: the other eye */
  float3 n = make_float3(cam->fwd_x, cam->fwd_y, cam->fwd_z);
  float3 ps = v3_add(pre, n); /* P_s: a point on the image plane */
  float denom = v3_dot(v3_sub(pre, pc), n);
  float t, sx, sy;
  float3 pr, rel;
  if (!(denom < 0.0f)) return 0;                    /* pc is not in front of the eye */
  t = v3_dot(v3_sub(ps, pc), n) / denom;            /* Eq. 4 */
  pr = v3_madd(pc, v3_sub(pre, pc), t);             /* Eq. 5: P_r = P_c + t (P_re - P_c) */
  rel = v3_sub(pr, pre);
  sx = v3_dot(rel, make_float3(cam->right_x, cam->right_y, cam->right_z));
  sy = v3_dot(rel, make_float3(cam->up_x, cam->up_y, cam->up_z));
  *x = (sx - cam->left) / (cam->right - cam->left) * (float)cam->width;
  *y = (cam->top - sy) / (cam->top - cam->bottom) * (float)cam->height;
  return 1;
}

/* Pixel index inside the tile for image position (x, y), or TS_PT_NO_TARGET outside it. */
TS_FN uint pt_tile_index(const PathTraceParams* pt, float x, float y) {
  float fx = ts_floor(x), fy = ts_floor(y);
  int ix, iy;
  if (!(fx >= (float)pt->tile_x0 && fy >= (float)pt->tile_y0)) return TS_PT_NO_TARGET;
  if (!(fx < (float)(pt->tile_x0 + pt->tile_w) && fy < (float)(pt->tile_y0 + pt->tile_h))) return TS_PT_NO_TARGET;
  ix = (int)fx - (int)pt->tile_x0;
  iy = (int)fy - (int)pt->tile_y0;
  return (uint)iy * pt->tile_w + (uint)ix;
}

/* Diffuse first hit (Algorithm 3 lines 11-17): the other eye's pixel that sees pc, or
 * TS_PT_NO_TARGET when pc projects outside the tile, faces away from that eye or is occluded. */
TS_FN uint pt_reproject_diffuse(const SceneView* scene, const RenderSettings* rs, const PathTraceParams* pt,
                                const CameraParams* other, float3 pc, float3 ng) {
  float3 to_eye = v3_sub(camera_origin(other), pc);
  float x, y;
  uint target;
  if (v3_dot(to_eye, ng) <= 0.0f) return TS_PT_NO_TARGET; /* the other eye sees the back */
  if (!pt_project(other, pc, &x, &y)) return TS_PT_NO_TARGET;
  target = pt_tile_index(pt, x, y);
  if (target == TS_PT_NO_TARGET) return target;
  if (scene_intersect_any(scene, v3_madd(pc, ng, rs->ray_epsilon), to_eye, 0.0f, 1.0f)) return TS_PT_NO_TARGET;
  return target;
}

/* The same test from the other eye's first hits of this sample: pixel `target` of the other eye saw
 * P_c's triangle (of the same instance, where the scene is instanced), or the same material at P_c's
 * distance within two pixel footprints (widened for surfaces seen at a grazing angle). */
TS_FN uint pt_reproject_primary(const ShadingContext* ctx, const PathTraceParams* pt, const CameraParams* other,
                                TS_GLOBAL const PtPrimary* other_primaries, float3 pc, float3 ng, PtPrimary first_hit,
                                uint material) {
  float3 to_eye = v3_sub(camera_origin(other), pc);
  float x, y, dist, cos_view, tol;
  uint target;
  PtPrimary q;
  if (v3_dot(to_eye, ng) <= 0.0f) return TS_PT_NO_TARGET;
  if (!pt_project(other, pc, &x, &y)) return TS_PT_NO_TARGET;
  target = pt_tile_index(pt, x, y);
  if (target == TS_PT_NO_TARGET) return target;
  q = other_primaries[target];
#ifdef TS_SCENE_INSTANCE_FIELDS
  if (q.tri == first_hit.tri && q.inst == first_hit.inst) return target;
#else
  if (q.tri == first_hit.tri) return target;
#endif
  if (q.tri == TS_KD_NO_TRIANGLE) return TS_PT_NO_TARGET;
  if (material_of_triangle(ctx->material_runs, ctx->material_run_count, q.tri) != material) return TS_PT_NO_TARGET;
  dist = v3_length(to_eye);
  cos_view = v3_dot(to_eye, ng) / dist;
  tol = 2.0f * dist * (other->top - other->bottom) / (float)other->height / ts_fmax(cos_view, 0.25f);
  return ts_fabs(q.dist - dist) <= tol ? target : TS_PT_NO_TARGET;
}

/* Mirror first hit (Algorithm 3 lines 18-24, Eq. 6): this eye saw q (a diffuse or emissive point)
 * in the mirror at pc with normal n. q mirrored in the tangent plane at pc is a virtual point the
 * other eye would see straight through the mirror; on a curved mirror the tangent plane is then
 * taken again where the other eye's ray meets the mirror, a few times. The result stands only if
 * the other eye's ray hits a mirror, its reflection passes within one pixel footprint of q, and
 * nothing blocks the way from the mirror to q. */
TS_FN uint pt_reproject_mirror(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs,
                               const PathTraceParams* pt, const CameraParams* other, float3 pc, float3 n, float3 q,
                               uint* segments) {
  float3 eye = camera_origin(other);
  float3 m = pc, nm = n, virt, dir, refl, to_q;
  float x, y, dist, footprint, off;
  uint k;
  Hit hit;
  Surface s;
  for (k = 0u; k < TS_PT_MIRROR_ITERATIONS; ++k) {
    virt = v3_sub(q, v3_scale(nm, 2.0f * v3_dot(v3_sub(q, m), nm)));
    dir = v3_normalize(v3_sub(virt, eye));
    ++*segments;
    if (!scene_intersect_closest(scene, eye, dir, 0.0f, TS_INFINITY, &hit)) return TS_PT_NO_TARGET;
    s = surface_at(scene, ctx, dir, &hit);
    if (ctx->materials[s.material].type != TS_MATERIAL_MIRROR) return TS_PT_NO_TARGET;
    m = s.p;
    nm = s.ns;
  }
  /* Does the reflected ray of the other eye reach q within a pixel's footprint? */
  refl = reflect_dir(dir, nm);
  to_q = v3_sub(q, m);
  dist = v3_length(to_q);
  if (!(dist > 0.0f) || v3_dot(to_q, s.ng) <= 0.0f) return TS_PT_NO_TARGET;
  off = v3_length(v3_cross(refl, to_q)); /* distance of q from the reflected ray (refl is unit) */
  footprint = (other->top - other->bottom) / (float)other->height * (v3_length(v3_sub(m, eye)) + dist);
  if (!(off <= footprint)) return TS_PT_NO_TARGET;
  if (!pt_project(other, m, &x, &y)) return TS_PT_NO_TARGET;
  if (pt_tile_index(pt, x, y) == TS_PT_NO_TARGET) return TS_PT_NO_TARGET;
  if (scene_intersect_any(scene, v3_madd(m, s.ng, rs->ray_epsilon), to_q, 0.0f, 0.999f)) return TS_PT_NO_TARGET;
  return pt_tile_index(pt, x, y);
}

/* Cosine-distributed direction around n from two uniform numbers. */
TS_FN float3 pt_cosine_direction(float3 n, float u1, float u2) {
  float3 t = ts_fabs(n.x) > 0.5f ? make_float3(0.0f, 1.0f, 0.0f) : make_float3(1.0f, 0.0f, 0.0f);
  float3 b;
  float r = ts_sqrt(u1), phi = 6.2831853f * u2;
  t = v3_normalize(v3_cross(t, n));
  b = v3_cross(n, t);
  return v3_add(v3_add(v3_scale(t, r * ts_cos(phi)), v3_scale(b, r * ts_sin(phi))),
                v3_scale(n, ts_sqrt(ts_fmax(0.0f, 1.0f - u1))));
}

TS_FN float pt_max3(float3 v) { return ts_fmax(v.x, ts_fmax(v.y, v.z)); }

typedef struct PtSample {
  float3 radiance;
  uint stopped;   /* the gaze rule ended the path */
  uint specular;  /* the primary hit is a mirror or glass */
  uint target;    /* the other eye's tile pixel that gets this sample too, or TS_PT_NO_TARGET */
  uint segments;  /* closest-hit rays */
} PtSample;

/* The camera ray of sample `sample` of pixel (px, py) of eye `eye`: jittered inside the pixel by
 * the sample's first two random numbers; *rng continues the sample's stream. */
TS_FN float3 pt_camera_ray(const RenderSettings* rs, const CameraParams* cam, uint eye, uint px, uint py, uint sample,
                           Rng* rng) {
  uint pixel_id = (eye * cam->height + py) * cam->width + px;
  float jx, jy;
  *rng = rng_make(pixel_id, sample, rs->seed);
  jx = rng_next(rng);
  jy = rng_next(rng);
  return camera_direction(cam, (float)px + jx, (float)py + jy);
}

/* Phase 1 of a sample: the first opaque hit of the camera ray (cut-out texels passed through). */
TS_FN PtPrimary pt_trace_primary(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs,
                                 const CameraParams* cam, float3 dir, uint* segments) {
  PtPrimary out;
  float3 org = camera_origin(cam);
  out.tri = TS_KD_NO_TRIANGLE;
  out.u = 0.0f;
  out.v = 0.0f;
  out.dist = 0.0f;
#ifdef TS_SCENE_INSTANCE_FIELDS
  out.inst = TS_NO_INSTANCE;
#endif
  while (*segments < TS_PT_MAX_SEGMENTS) {
    Hit hit;
    Surface s;
    ++*segments;
    if (!scene_intersect_closest(scene, org, dir, 0.0f, TS_INFINITY, &hit)) break;
    s = surface_at(scene, ctx, dir, &hit);
    if (ctx->materials[s.material].type == TS_MATERIAL_DIFFUSE && surface_albedo(ctx, &s).w < 0.5f) {
      org = v3_madd(s.p, s.ng, -rs->ray_epsilon);
      continue;
    }
    out.tri = hit.tri;
    out.u = hit.u;
    out.v = hit.v;
#ifdef TS_SCENE_INSTANCE_FIELDS
    out.inst = (scene_flags(scene) & TS_SCENE_INSTANCED) ? hit.inst : TS_NO_INSTANCE; /* single-level hits leave it unset */
#endif
    out.dist = v3_length(v3_sub(s.p, camera_origin(cam)));
    break;
  }
  return out;
}

/* A contribution scaled so its largest channel is at most `limit` (0: unchanged). */
TS_FN float3 pt_clamped(float3 c, float limit) {
  float m = pt_max3(c);
  return (limit > 0.0f && m > limit) ? v3_scale(c, limit / m) : c;
}

/* Phase 2: the path of a sample from its first hit `first_hit` along camera ray `dir`. `other` is
 * the other eye and other_primaries its first hits of this sample (reprojection; unused in mono). */
TS_FN PtSample pt_trace_sample(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs,
                               const PathTraceParams* pt, const CameraParams* cam, const CameraParams* other,
                               float3 dir, PtPrimary first_hit, TS_GLOBAL const PtPrimary* other_primaries, float stop_p,
                               Rng* rng) {
  PtSample out;
  float3 org = camera_origin(cam);
  float3 throughput = make_float3(1.0f, 1.0f, 1.0f);
  float3 radiance = make_float3(0.0f, 0.0f, 0.0f);
  float3 pc = make_float3(0.0f, 0.0f, 0.0f), nc = pc;
  uint depth = 0u, segments = 0u, count_emission = 1u;
  float clamp = 0.0f; /* pt->indirect_clamp once the path has bounced off a diffuse surface */
  uint first = 0u; /* 2: a mirror first hit waits for its next vertex (Eq. 6) */
  uint reproject = pt->eye_count > 1u && (pt->features & TS_PT_REPROJECT);
  out.stopped = 0u;
  out.specular = 0u;
  out.target = TS_PT_NO_TARGET;
  for (;;) {
    Hit hit;
    Surface s;
    MaterialGpu m;
    if (depth == 0u) { /* phase 1 found it */
      hit.tri = first_hit.tri;
      hit.t = first_hit.dist;
      hit.u = first_hit.u;
      hit.v = first_hit.v;
#ifdef TS_SCENE_INSTANCE_FIELDS
      hit.inst = first_hit.inst;
#endif
    } else {
      if (segments >= TS_PT_MAX_SEGMENTS) break;
      ++segments;
      if (!scene_intersect_closest(scene, org, dir, 0.0f, TS_INFINITY, &hit)) hit.tri = TS_KD_NO_TRIANGLE;
    }
    if (hit.tri == TS_KD_NO_TRIANGLE) {
      radiance = v3_add(radiance, pt_clamped(v3_mul(throughput, make_float3(rs->background_r, rs->background_g, rs->background_b)), clamp));
      first = first == 2u ? 0u : first; /* a mirror showing the background: nothing to reproject */
      break;
    }
    s = surface_at(scene, ctx, dir, &hit);
    m = ctx->materials[s.material];
    if (first == 2u && m.type != TS_MATERIAL_DIFFUSE && m.type != TS_MATERIAL_EMISSIVE) first = 0u;
    if (depth == 0u && reproject && (m.type == TS_MATERIAL_DIFFUSE || m.type == TS_MATERIAL_EMISSIVE)) {
      /* Algorithm 3 lines 10-17: where the other eye sees P_c; the radiance is added at the end */
      out.target = (pt->features & TS_PT_VISIBILITY_RAY)
                       ? pt_reproject_diffuse(scene, rs, pt, other, s.p, s.ng)
                       : pt_reproject_primary(ctx, pt, other, other_primaries, s.p, s.ng, first_hit, s.material);
    }
    if (m.type == TS_MATERIAL_EMISSIVE) {
      if (count_emission && s.front) /* emitters are one-sided, as direct_light() samples them */
        radiance = v3_add(radiance, pt_clamped(v3_mul(throughput, make_float3(m.emission_r, m.emission_g, m.emission_b)), clamp));
      if (first == 2u) { /* a light seen in a mirror first hit (Eq. 6) */
        first = 0u;
        out.target = pt_reproject_mirror(scene, ctx, rs, pt, other, pc, nc, s.p, &segments);
      }
      break;
    }
    if (m.type == TS_MATERIAL_DIFFUSE) {
      float4 albedo = surface_albedo(ctx, &s);
      float3 a = make_float3(albedo.x, albedo.y, albedo.z);
      if (albedo.w < 0.5f) { /* cut-out texel: the same ray goes on behind it (phase 1 did so at depth 0) */
        org = v3_madd(s.p, s.ng, -rs->ray_epsilon);
        continue;
      }
      if (first == 2u) { /* the diffuse vertex a mirror first hit shows (Algorithm 3 lines 18-24, Eq. 6) */
        first = 0u;
        out.target = pt_reproject_mirror(scene, ctx, rs, pt, other, pc, nc, s.p, &segments);
      }
      radiance = v3_add(radiance, pt_clamped(v3_mul(throughput, v3_mul(a, direct_light(scene, ctx, rs, &s, rng))), clamp));
      if (depth >= rs->max_depth) break;
      {
        float u1 = rng_next(rng), u2 = rng_next(rng);
        dir = pt_cosine_direction(s.ns, u1, u2);
      }
      if (v3_dot(dir, s.ng) <= 0.0f) break; /* below the surface (shading normal): absorbed */
      throughput = v3_mul(throughput, a);   /* BRDF cos / pdf = albedo */
      clamp = pt->indirect_clamp;
      org = v3_madd(s.p, s.ng, rs->ray_epsilon);
      count_emission = rs->light_samples == 0u;
    } else {
      if (depth == 0u) out.specular = 1u;
      if (depth >= rs->max_depth) break;
      if (m.type == TS_MATERIAL_MIRROR) {
        if (depth == 0u && reproject && (pt->features & TS_PT_REPROJECT_MIRROR)) {
          first = 2u;
          pc = s.p;
          nc = s.ns;
        }
        dir = reflect_dir(dir, s.ns);
        throughput = v3_mul(throughput, make_float3(m.diffuse_r, m.diffuse_g, m.diffuse_b));
        org = v3_madd(s.p, s.ng, rs->ray_epsilon);
      } else { /* glass: reflect or refract, chosen by the Fresnel reflectance */
        float cos_i = ts_fmax(-v3_dot(dir, s.ns), 0.0f);
        float eta_i = s.front ? 1.0f : m.ior, eta_t = s.front ? m.ior : 1.0f;
        float f = fresnel_dielectric(cos_i, eta_i, eta_t);
        if (rng_next(rng) < f) {
          dir = reflect_dir(dir, s.ns);
          org = v3_madd(s.p, s.ng, rs->ray_epsilon);
        } else {
          float eta = eta_i / eta_t;
          float k = 1.0f - eta * eta * (1.0f - cos_i * cos_i);
          dir = v3_normalize(v3_add(v3_scale(dir, eta), v3_scale(s.ns, eta * cos_i - ts_sqrt(ts_fmax(k, 0.0f)))));
          org = v3_madd(s.p, s.ng, -rs->ray_epsilon);
        }
      }
      count_emission = 1u;
    }
    /* Algorithm 3 lines 31-34: gaze-based stopping after the depth threshold (Eq. 7) */
    if ((pt->features & TS_PT_GAZE_STOP) && depth > pt->depth_threshold) {
      if (rng_next(rng) < stop_p) {
        out.stopped = 1u;
        break;
      }
      if (pt->features & TS_PT_STOP_COMPENSATE) throughput = v3_scale(throughput, 1.0f / (1.0f - stop_p));
    }
    if (depth >= pt->rr_depth) {
      float q = ts_fmin(ts_fmax(pt_max3(throughput), 0.05f), 1.0f);
      if (rng_next(rng) >= q) break;
      throughput = v3_scale(throughput, 1.0f / q);
    }
    ++depth;
  }
  if (first == 2u) out.target = TS_PT_NO_TARGET; /* the mirror path ended before its next vertex */
  out.radiance = radiance;
  out.segments = segments;
  return out;
}

/* Phase 1 for pixel (tx, ty) of the tile in eye `eye`: its first hit of sample pt->first_sample. */
TS_FN void pt_primary_pixel(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs,
                            const PathTraceParams* pt, const CameraParams* cam, uint eye, uint tx, uint ty,
                            TS_GLOBAL PtPrimary* out, TS_GLOBAL PtPixelOut* own) {
  Rng rng;
  uint segments = 0u;
  float3 dir = pt_camera_ray(rs, cam, eye, pt->tile_x0 + tx, pt->tile_y0 + ty, pt->first_sample, &rng);
  *out = pt_trace_primary(scene, ctx, rs, cam, dir, &segments);
  own->segments += segments;
}

/* Phase 2 for pixel (tx, ty) of the tile in eye `eye`: the path of sample pt->first_sample, added to
 * the pixel's own sums *own; a reprojected sample is added to the other eye's reprojection buffer
 * `other_reproj` (float4 r, g, b, count per tile pixel). primaries: this eye's first hits,
 * other_primaries the other eye's (tile pixels row by row). */
#ifdef TS_DEVICE_OPENCL
#define TS_PT_REPROJ_PTR volatile __global float*
#else
#define TS_PT_REPROJ_PTR float*
#endif
TS_FN void pt_path_pixel(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs,
                         const PathTraceParams* pt, const CameraParams* cam, const CameraParams* other, uint eye, uint tx,
                         uint ty, TS_GLOBAL const PtPrimary* primaries, TS_GLOBAL const PtPrimary* other_primaries,
                         TS_GLOBAL PtPixelOut* own, TS_PT_REPROJ_PTR other_reproj) {
  uint px = pt->tile_x0 + tx, py = pt->tile_y0 + ty;
  float stop_p = pt_stop_probability(pt, (float)px + 0.5f, (float)py + 0.5f);
  Rng rng;
  float3 dir = pt_camera_ray(rs, cam, eye, px, py, pt->first_sample, &rng);
  PtSample s = pt_trace_sample(scene, ctx, rs, pt, cam, other, dir, primaries[ty * pt->tile_w + tx], other_primaries,
                               stop_p, &rng);
  own->segments += s.segments;
  /* a NaN or infinite sample would poison the pixel for good: drop it */
  if (!(s.radiance.x + s.radiance.y + s.radiance.z < TS_INFINITY)) return;
  own->r += s.radiance.x;
  own->g += s.radiance.y;
  own->b += s.radiance.z;
  own->samples += 1u;
  own->stopped += s.stopped;
  own->specular += s.specular;
  if (s.target != TS_PT_NO_TARGET) { /* Algorithm 3 lines 38-40 */
    TS_PT_REPROJ_PTR t = other_reproj + 4u * s.target;
    pt_atomic_add(t, s.radiance.x);
    pt_atomic_add(t + 1, s.radiance.y);
    pt_atomic_add(t + 2, s.radiance.z);
    pt_atomic_add(t + 3, 1.0f);
    own->reprojected += 1u;
  }
}

#endif
