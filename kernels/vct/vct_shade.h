/* One pixel of the `vct` mode: a primary ray through the kd-tree, then cone tracing, combined as in
 * papers/001 Eq. 4.9 and 4.10:
 *   S_tot = i S AO + (1 - i) AO                          (i: shadow_mix)
 *   r     = sum over lights (n.l) S_tot c_light c_frag  +  c_diffuse c_frag  (+ ambient AO c_frag)
 * The five presets are the thesis's five configurations (§5.1.2):
 *   1 basic shading (no shadows)        2 + hard shadows (a shadow ray through the kd-tree, where the
 *   3 + ambient occlusion (cones)          thesis used a shadow map)
 *   4 + diffuse indirect light (cones)  5 like 4 with a cone-traced soft shadow instead of the ray
 * Light in the voxels is diffuse: mirror and glass are seen through rays in the kd-tree to the first
 * diffuse surface (vct_primary_surface), and only as diffuse occluders by the cones; cut-out texels let
 * primary rays through, as in the raytrace mode. A pixel is two halves, vct_primary_surface (the kd-tree
 * walk of the primary ray) and vct_shade_surface (cones, lights, shadows), so the OpenCL tile render can
 * run them as two kernels: the walk then runs without the registers the cones take. */
#ifndef TESSERA_KERNELS_VCT_VCT_SHADE_H
#define TESSERA_KERNELS_VCT_VCT_SHADE_H
#include "kernels/accel/scene_trace.h"
#include "kernels/render/camera.h"
#include "kernels/render/camera_packet.h"
#include "kernels/render/ray_cone.h"
#include "kernels/shading/specular.h"
#include "kernels/vct/vct_cone.h"
#include "kernels/vct/vct_light.h"
#include "kernels/vct/vct_surface.h"

#define TS_VCT_OUTPUT_COLOR 0u
#define TS_VCT_OUTPUT_AO 1u           /* the cone-traced ambient occlusion as linear grey */
#define TS_VCT_OUTPUT_INDIRECT 2u     /* only the diffuse indirect term */
#define TS_VCT_OUTPUT_AO_REFERENCE 3u /* ambient occlusion by cosine-distributed rays through the kd-tree */
#define TS_VCT_MAX_PASS_THROUGH 16u

/* Per-frame settings, passed by value: scalars only, 48 bytes. */
typedef struct VctSettings {
  uint preset;      /* 1..5 */
  uint light_count; /* entries of the VctLight buffer */
  uint output;      /* TS_VCT_OUTPUT_* */
  uint ao_reference_rays;
  float shadow_sin_half; /* sin(theta / 2) of the shadow cone */
  float ao_distance;     /* reach of the ambient occlusion, world units */
  float cone_offset;     /* cones start this far along the normal, world units */
  float shadow_mix;      /* i of Eq. 4.9 */
  float indirect_scale;  /* multiplier on the diffuse indirect term (1) */
  uint indirect_normalize; /* 1: a cone's radiance is C / A (the thesis), 0: the composite C */
  float side_lift;         /* side cones' samples move this share of their distance along the normal */
  float pad2;
} VctSettings;

/* Ambient occlusion of a surface point by `rays` cosine-distributed rays of length `distance`. */
TS_FN float vct_ao_reference(const SceneView* scene, float3 p, float3 n, float eps, float distance, uint rays, Rng* rng) {
  float3 t, b, org = v3_madd(p, n, eps);
  uint i, open = 0u;
  vct_basis(n, &t, &b);
  for (i = 0u; i < rays; ++i) {
    float u1 = rng_next(rng), u2 = rng_next(rng), r = ts_sqrt(u1), phi = 6.2831853f * u2;
    float3 d = v3_add(v3_add(v3_scale(t, r * ts_cos(phi)), v3_scale(b, r * ts_sin(phi))),
                      v3_scale(n, ts_sqrt(ts_fmax(0.0f, 1.0f - u1))));
    if (!scene_intersect_any(scene, org, d, 0.0f, distance)) ++open;
  }
  return rays > 0u ? (float)open / (float)rays : 1.0f;
}

/* The primary ray's part of a pixel: through cut-out texels to the first diffuse surface, textures
 * filtered over the ray's cone (kernels/render/ray_cone.h). Voxels hold diffuse light only, so mirror
 * and glass surfaces are followed by rays through the kd-tree as in the raytrace mode: a mirror
 * reflects (tinted by its colour), glass takes the stronger of its Fresnel-weighted reflection and
 * refraction (the weaker lobe, about 4 % at normal incidence, is left out), up to max_depth bounces;
 * the diffuse surface found is then shaded by cones, times the path's weight. primary: the ray's hit
 * when the caller traced it already (a packet on CPUs), else 0. */
TS_FN VctSurfaceRecord vct_primary_surface(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs,
                                           float3 org, float3 dir, RayCone cone, const Hit* primary) {
  uint pass, depth = 0u;
  float3 weight = make_float3(1.0f, 1.0f, 1.0f);
  float3 background = make_float3(rs->background_r, rs->background_g, rs->background_b);
  for (pass = 0u; pass < TS_VCT_MAX_PASS_THROUGH; ++pass) {
    Hit hit;
    Surface s;
    MaterialGpu m;
    float4 albedo;
    VctSurfaceRecord r;
    int found;
    if (pass == 0u && primary) {
      hit = *primary;
      found = hit.tri != TS_KD_NO_TRIANGLE;
    } else {
      found = scene_intersect_closest(scene, org, dir, 0.0f, TS_INFINITY, &hit);
    }
    if (!found) return vct_surface_radiance(TS_VCT_SURFACE_BACKGROUND, v3_mul(weight, background));
    s = surface_at(scene, ctx, dir, &hit);
    m = ctx->materials[s.material];
    if (m.type == TS_MATERIAL_EMISSIVE)
      return vct_surface_radiance(TS_VCT_SURFACE_EMISSIVE, v3_mul(weight, make_float3(m.emission_r, m.emission_g, m.emission_b)));
    if (m.type == TS_MATERIAL_MIRROR || m.type == TS_MATERIAL_GLASS) {
      float curvature = surface_curvature(scene, &s, hit.tri);
      if (depth++ >= rs->max_depth) return vct_surface_radiance(TS_VCT_SURFACE_BACKGROUND, make_float3(0.0f, 0.0f, 0.0f));
      if (m.type == TS_MATERIAL_MIRROR) {
        weight = v3_mul(weight, make_float3(m.diffuse_r, m.diffuse_g, m.diffuse_b));
        org = v3_madd(s.p, s.ng, rs->ray_epsilon);
        dir = reflect_dir(dir, s.ns);
        cone = ray_cone_reflect(cone, hit.t, curvature);
      } else {
        float cos_i = ts_fmax(-v3_dot(dir, s.ns), 0.0f);
        float eta_i = s.front ? 1.0f : m.ior, eta_t = s.front ? m.ior : 1.0f;
        float f = fresnel_dielectric(cos_i, eta_i, eta_t);
        if (f >= 0.5f) {
          weight = v3_scale(weight, f);
          org = v3_madd(s.p, s.ng, rs->ray_epsilon);
          dir = reflect_dir(dir, s.ns);
          cone = ray_cone_reflect(cone, hit.t, curvature);
        } else {
          weight = v3_scale(weight, 1.0f - f);
          org = v3_madd(s.p, s.ng, -rs->ray_epsilon);
          dir = refract_dir(dir, s.ns, cos_i, eta_i / eta_t);
          cone = ray_cone_refract(cone, hit.t, curvature, eta_i / eta_t);
        }
      }
      continue;
    }
    albedo = surface_albedo_cone(ctx, &s, ray_cone_width_at(cone, hit.t));
    if (albedo.w < 0.5f) { /* cut-out: continue behind the surface */
      org = v3_madd(s.p, s.ng, -rs->ray_epsilon);
      cone = ray_cone_pass(cone, hit.t);
      continue;
    }
    r.p = s.p;
    r.ng = s.ng;
    r.ns = s.ns;
    r.color = v3_mul(weight, make_float3(albedo.x, albedo.y, albedo.z));
    r.kind = TS_VCT_SURFACE_LIT;
    return r;
  }
  return vct_surface_radiance(TS_VCT_SURFACE_BACKGROUND, v3_mul(weight, background));
}

/* Linear radiance of a primary ray's record; *ao_out receives the ambient occlusion (1 where none was
 * traced). The scene is traced only by hard shadows (presets 2 - 4) and the AO reference. */
TS_FN float3 vct_shade_surface(const SceneView* scene, const RenderSettings* rs, const VctGrid* g, const VctSettings* vs,
                               TS_GLOBAL const VctLight* lights, const VctSurfaceRecord* s, Rng* rng, float* ao_out) {
  float3 a = s->color, o, direct = make_float3(0.0f, 0.0f, 0.0f), indirect = make_float3(0.0f, 0.0f, 0.0f);
  float ao = 1.0f, full;
  uint l;
  *ao_out = 1.0f;
  if (s->kind != TS_VCT_SURFACE_LIT) return s->color;
  if (vs->output == TS_VCT_OUTPUT_AO_REFERENCE) {
    *ao_out = vct_ao_reference(scene, s->p, s->ng, rs->ray_epsilon, vs->ao_distance, vs->ao_reference_rays, rng);
    return make_float3(*ao_out, *ao_out, *ao_out);
  }
  o = v3_madd(s->p, s->ns, vs->cone_offset);
  full = g->p.voxel_size * (float)g->p.resolution * 1.7320508f;
  if (vs->preset >= 3u || vs->output == TS_VCT_OUTPUT_AO)
    vct_diffuse_cones_lifted(g, o, s->ns, vs->ao_distance, vs->preset >= 4u ? full : vs->ao_distance * (1.0f / 1.5f),
                             vs->indirect_normalize, vs->side_lift, &ao, &indirect);
  *ao_out = ao;
  if (vs->output == TS_VCT_OUTPUT_AO) return make_float3(ao, ao, ao);
  indirect = v3_scale(indirect, vs->indirect_scale);
  if (vs->output == TS_VCT_OUTPUT_INDIRECT) return vs->preset >= 4u ? v3_mul(a, indirect) : make_float3(0.0f, 0.0f, 0.0f);
  for (l = 0u; l < vs->light_count; ++l) {
    VctLight light = lights[l];
    float3 wi, inc;
    float dist, cosine, shadow = 1.0f, total;
    inc = vct_light_incident(&light, s->p, &wi, &dist);
    cosine = v3_dot(s->ns, wi);
    if (cosine <= 0.0f || v3_dot(s->ng, wi) <= 0.0f) continue;
    if (vs->preset >= 2u && vs->preset <= 4u) {
      float3 ro = v3_madd(s->p, s->ng, rs->ray_epsilon);
      int blocked = light.type == TS_VCT_LIGHT_DIRECTIONAL
                        ? scene_intersect_any(scene, ro, wi, 0.0f, TS_INFINITY)
                        : scene_intersect_any(scene, ro, v3_sub(make_float3(light.x, light.y, light.z), ro), 0.0f, 0.9999f);
      shadow = blocked ? 0.0f : 1.0f;
    } else if (vs->preset >= 5u) {
      float reach = TS_INFINITY;
      float3 aim = wi;
      if (light.type != TS_VCT_LIGHT_DIRECTIONAL) {
        float3 target = make_float3(light.x, light.y, light.z);
        if (light.type == TS_VCT_LIGHT_AREA) {
          float3 ln = make_float3(light.nx, light.ny, light.nz);
          target = v3_madd(target, ln, v3_dot(ln, v3_sub(o, target)) >= 0.0f ? light.cone_lift : -light.cone_lift);
        }
        reach = v3_length(v3_sub(target, o));
        if (reach > 0.0f) aim = v3_scale(v3_sub(target, o), 1.0f / reach);
      }
      shadow = vct_shadow_cone(g, o, aim, vs->shadow_sin_half, reach, rng_next(rng));
    }
    total = vs->preset >= 3u ? vs->shadow_mix * shadow * ao + (1.0f - vs->shadow_mix) * ao : shadow;
    direct = v3_madd(direct, inc, cosine * total);
  }
  /* Eq. 4.10 has no ambient term: presets 1 - 3 keep the raytrace mode's ambient (times AO), 4 and 5
   * have the traced indirect light instead. */
  if (vs->preset >= 4u) return v3_mul(a, v3_add(direct, indirect));
  return v3_mul(a, v3_add(direct, make_float3(rs->ambient * ao, rs->ambient * ao, rs->ambient * ao)));
}

/* Linear radiance of one primary ray; *ao_out as in vct_shade_surface. */
TS_FN float3 vct_radiance(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs, const VctGrid* g,
                          const VctSettings* vs, TS_GLOBAL const VctLight* lights, float3 org, float3 dir, RayCone cone,
                          Rng* rng, float* ao_out) {
  VctSurfaceRecord s = vct_primary_surface(scene, ctx, rs, org, dir, cone, 0);
  return vct_shade_surface(scene, rs, g, vs, lights, &s, rng, ao_out);
}

/* The record of pixel (px, py)'s primary ray. */
TS_FN VctSurfaceRecord vct_pixel_surface(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs,
                                         const CameraParams* cam, uint px, uint py) {
  float3 dir = camera_direction(cam, (float)px + 0.5f, (float)py + 0.5f);
  return vct_primary_surface(scene, ctx, rs, camera_origin(cam), dir, ray_cone_primary(cam, rs->texture_lod), 0);
}

#ifdef TS_KD_CPU
/* CPU devices: the records of a pixel block at (x0, y0), its primary rays traced as one packet
 * (kernels/render/camera_packet.h); the same records as vct_pixel_surface. records[l] is the block's
 * lane l; lanes at or beyond (x_end, y_end) are left alone. */
TS_FN void vct_block_surfaces(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs,
                              const CameraParams* cam, uint x0, uint y0, uint x_end, uint y_end,
                              VctSurfaceRecord* records) {
  KdPacket rays;
  Hit hits[TS_SIMD_LANES];
  uint l;
  camera_block_hits(scene, cam, x0, y0, x_end, y_end, &rays, hits);
  for (l = 0u; l < TS_SIMD_LANES; ++l)
    if (camera_block_inside(x0, y0, l, x_end, y_end))
      records[l] = vct_primary_surface(scene, ctx, rs, rays.org[l], rays.dir[l], ray_cone_primary(cam, rs->texture_lod), &hits[l]);
}
#endif

/* Pixel (px, py) from its primary ray's record, as packed sRGB RGBA8. */
TS_FN uint vct_pixel_shade(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs, const VctGrid* g,
                           const VctSettings* vs, TS_GLOBAL const VctLight* lights, const CameraParams* cam, uint px,
                           uint py, const VctSurfaceRecord* s) {
  Rng rng = rng_make(py * cam->width + px, 0u, rs->seed);
  float ao;
  float3 c = vct_shade_surface(scene, rs, g, vs, lights, s, &rng, &ao);
  if (vs->output == TS_VCT_OUTPUT_AO || vs->output == TS_VCT_OUTPUT_AO_REFERENCE) {
    /* linear grey, so images can be compared as numbers: 0 occluded, 255 open */
    uint q = (uint)ts_floor(ts_fmin(ts_fmax(ao, 0.0f), 1.0f) * 255.0f + 0.5f);
    return q | (q << 8) | (q << 16) | 0xFF000000u;
  }
  return pack_rgba8(&ctx->color, v3_scale(c, rs->exposure));
}

/* One pixel as packed sRGB RGBA8. */
TS_FN uint vct_pixel(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs, const VctGrid* g,
                     const VctSettings* vs, TS_GLOBAL const VctLight* lights, const CameraParams* cam, uint px, uint py) {
  VctSurfaceRecord s = vct_pixel_surface(scene, ctx, rs, cam, px, py);
  return vct_pixel_shade(scene, ctx, rs, g, vs, lights, cam, px, py, &s);
}

#endif
