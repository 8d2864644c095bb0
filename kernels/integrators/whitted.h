/* Whitted ray tracing (the `raytrace` mode): primary rays, shadow rays toward every light and
 * sampled emissive triangles, perfect mirror reflection and glass refraction weighted by the
 * Fresnel equations. Every ray carries its pixel's ray cone, so textures are filtered over the
 * footprint also in mirrors and through glass (kernels/render/ray_cone.h). Recursion is unrolled
 * onto a small stack of pending rays, since OpenCL C has none. Alpha-masked texels (foliage, chains) let primary and secondary rays pass through;
 * shadow rays treat them as opaque. */
#ifndef TESSERA_KERNELS_INTEGRATORS_WHITTED_H
#define TESSERA_KERNELS_INTEGRATORS_WHITTED_H
#include "kernels/accel/scene_trace.h"
#include "kernels/render/camera_packet.h"
#include "kernels/integrators/direct_light.h"
#include "kernels/render/camera.h"
#include "kernels/render/ray_cone.h"
#include "kernels/shading/specular.h"

#define TS_WHITTED_STACK 12
#define TS_WHITTED_MAX_SEGMENTS 64 /* bounds the work of a pixel, pass-throughs included */

typedef struct PendingRay {
  float3 org, dir, weight;
  RayCone cone; /* the pixel's footprint cone at org, for texture filtering */
  uint depth;
} PendingRay;

/* primary: the hit of the ray (org, dir) when the caller traced it already (a packet on CPUs), else 0.
 * cone: the ray's footprint cone (ray_cone_primary); reflected and refracted rays carry it on. */
TS_FN float3 whitted_radiance(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs, float3 org,
                              float3 dir, RayCone cone, const Hit* primary, Rng* rng) {
  PendingRay stack[TS_WHITTED_STACK];
  uint sp = 1u, segments = 0u;
  float3 result = make_float3(0.0f, 0.0f, 0.0f);
  stack[0].org = org;
  stack[0].dir = dir;
  stack[0].weight = make_float3(1.0f, 1.0f, 1.0f);
  stack[0].cone = cone;
  stack[0].depth = 0u;
  while (sp > 0u && segments < TS_WHITTED_MAX_SEGMENTS) {
    PendingRay r = stack[--sp];
    Hit hit;
    Surface s;
    MaterialGpu m;
    float width;
    int found;
    if (segments++ == 0u && primary) {
      hit = *primary;
      found = hit.tri != TS_KD_NO_TRIANGLE;
    } else {
      found = scene_intersect_closest(scene, r.org, r.dir, 0.0f, TS_INFINITY, &hit);
    }
    if (!found) {
      result = v3_add(result, v3_mul(r.weight, make_float3(rs->background_r, rs->background_g, rs->background_b)));
      continue;
    }
    s = surface_at(scene, ctx, r.dir, &hit);
    m = ctx->materials[s.material];
    width = ray_cone_width_at(r.cone, hit.t);
    if (m.type == TS_MATERIAL_EMISSIVE) {
      result = v3_add(result, v3_mul(r.weight, make_float3(m.emission_r, m.emission_g, m.emission_b)));
      continue;
    }
    if (m.type == TS_MATERIAL_DIFFUSE) {
      float4 albedo = surface_albedo_cone(ctx, &s, width);
      float3 a = make_float3(albedo.x, albedo.y, albedo.z);
      if (albedo.w < 0.5f) { /* cut-out: continue the same ray behind the surface */
        if (sp >= TS_WHITTED_STACK) continue;
        stack[sp].org = v3_madd(s.p, s.ng, -rs->ray_epsilon);
        stack[sp].dir = r.dir;
        stack[sp].weight = r.weight;
        stack[sp].cone = ray_cone_pass(r.cone, hit.t);
        stack[sp].depth = r.depth;
        ++sp;
        continue;
      }
      {
        float3 light = direct_light(scene, ctx, rs, &s, rng);
        light = v3_add(light, make_float3(rs->ambient, rs->ambient, rs->ambient));
        result = v3_add(result, v3_mul(r.weight, v3_mul(a, light)));
      }
      continue;
    }
    if (r.depth >= rs->max_depth) continue;
    if (m.type == TS_MATERIAL_MIRROR) {
      if (sp >= TS_WHITTED_STACK) continue;
      stack[sp].org = v3_madd(s.p, s.ng, rs->ray_epsilon);
      stack[sp].dir = reflect_dir(r.dir, s.ns);
      stack[sp].weight = v3_mul(r.weight, make_float3(m.diffuse_r, m.diffuse_g, m.diffuse_b));
      stack[sp].cone = ray_cone_reflect(r.cone, hit.t, surface_curvature(scene, &s, hit.tri));
      stack[sp].depth = r.depth + 1u;
      ++sp;
    } else { /* glass */
      float curvature = surface_curvature(scene, &s, hit.tri);
      float cos_i = -v3_dot(r.dir, s.ns);
      float eta_i = s.front ? 1.0f : m.ior, eta_t = s.front ? m.ior : 1.0f;
      float f = fresnel_dielectric(ts_fmax(cos_i, 0.0f), eta_i, eta_t);
      if (f > 0.0f && sp < TS_WHITTED_STACK) {
        stack[sp].org = v3_madd(s.p, s.ng, rs->ray_epsilon);
        stack[sp].dir = reflect_dir(r.dir, s.ns);
        stack[sp].weight = v3_scale(r.weight, f);
        stack[sp].cone = ray_cone_reflect(r.cone, hit.t, curvature);
        stack[sp].depth = r.depth + 1u;
        ++sp;
      }
      if (f < 1.0f && sp < TS_WHITTED_STACK) {
        float eta = eta_i / eta_t;
        stack[sp].org = v3_madd(s.p, s.ng, -rs->ray_epsilon);
        stack[sp].dir = refract_dir(r.dir, s.ns, cos_i, eta);
        stack[sp].weight = v3_scale(r.weight, 1.0f - f);
        stack[sp].cone = ray_cone_refract(r.cone, hit.t, curvature, eta);
        stack[sp].depth = r.depth + 1u;
        ++sp;
      }
    }
  }
  return result;
}

/* One pixel of the `raytrace` mode, as packed sRGB RGBA8. */
TS_FN uint raytrace_pixel(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs,
                          const CameraParams* cam, uint px, uint py) {
  float3 dir = camera_direction(cam, (float)px + 0.5f, (float)py + 0.5f);
  Rng rng = rng_make(py * cam->width + px, 0u, rs->seed);
  float3 c = whitted_radiance(scene, ctx, rs, camera_origin(cam), dir, ray_cone_primary(cam, rs->texture_lod), 0, &rng);
  return pack_rgba8(&ctx->color, v3_scale(c, rs->exposure));
}

#ifdef TS_KD_CPU
/* CPU devices: the pixels of a block at (x0, y0), their primary rays traced as one packet
 * (kernels/render/camera_packet.h); the same colours as raytrace_pixel. rgba[l] is the block's lane
 * l; pixels at or beyond (x_end, y_end) are left alone. */
TS_FN void raytrace_block(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs,
                          const CameraParams* cam, uint x0, uint y0, uint x_end, uint y_end, uint* rgba) {
  KdPacket rays;
  Hit hits[TS_SIMD_LANES];
  uint l;
  camera_block_hits(scene, cam, x0, y0, x_end, y_end, &rays, hits);
  for (l = 0u; l < TS_SIMD_LANES; ++l) {
    Rng rng;
    float3 c;
    if (!camera_block_inside(x0, y0, l, x_end, y_end)) continue;
    rng = rng_make(camera_block_y(y0, l) * cam->width + camera_block_x(x0, l), 0u, rs->seed);
    c = whitted_radiance(scene, ctx, rs, rays.org[l], rays.dir[l], ray_cone_primary(cam, rs->texture_lod), &hits[l], &rng);
    rgba[l] = pack_rgba8(&ctx->color, v3_scale(c, rs->exposure));
  }
}
#endif

#endif
