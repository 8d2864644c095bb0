/* The per-pixel outputs beside the colour (FrameRequest.aux, tessera-render --depth-out and
 * --background transparent), from one primary ray through the pixel's centre, the same in every
 * mode: the inverse depth of its first opaque hit (cut-out texels passed through, as the renderers
 * do) and the pixel's coverage, where a ray that misses the scene may still find the shadow
 * catcher, an invisible plane y = height that shows only how much of the direct light of the
 * point and directional lights the scene blocks there. */
#ifndef TESSERA_KERNELS_INTEGRATORS_PRIMARY_AUX_H
#define TESSERA_KERNELS_INTEGRATORS_PRIMARY_AUX_H
#include "kernels/accel/scene_trace.h"
#include "kernels/render/camera.h"
#include "kernels/shading/surface.h"

#define TS_AUX_MAX_SEGMENTS 64 /* pass-throughs of cut-out texels, as the renderers bound them */

typedef struct AuxSettings {
  float depth_near;     /* q = 65535 * min(1, depth_near / z); > 0 */
  uint has_catcher;     /* 1: the shadow catcher plane is there */
  float catcher_height; /* the plane y = catcher_height */
  float shadow_opacity; /* coverage of a spot that receives none of the lights' direct light */
} AuxSettings;

/* One pixel's outputs in one word: the 16-bit inverse depth in bits 0-15 (0: the ray hits nothing)
 * and the coverage alpha in bits 16-23 (255: the ray hits the scene). */
TS_FN uint aux_pack(uint inverse_depth, uint alpha) { return (inverse_depth & 0xFFFFu) | ((alpha & 0xFFu) << 16); }

/* The 16-bit inverse depth of a point at depth z (along the viewing axis) in front of the eye. */
TS_FN uint aux_inverse_depth(float depth_near, float z) {
  float ratio = z > depth_near ? depth_near / z : 1.0f;
  return (uint)(ratio * 65535.0f + 0.5f);
}

/* Share of the plane's direct light (point and directional lights, weighted by their irradiance
 * there) that the scene blocks at point p of the plane, whose normal n faces the viewer. */
TS_FN float aux_blocked_share(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs, float3 p,
                              float3 n) {
  float total = 0.0f, blocked = 0.0f;
  float3 origin = v3_madd(p, n, rs->ray_epsilon);
  uint i;
  for (i = 0u; i < ctx->light_count; ++i) {
    LightGpu l = ctx->lights[i];
    float power = 0.2126f * l.r + 0.7152f * l.g + 0.0722f * l.b; /* luminance of the light's colour */
    float weight;
    int occluded;
    if (l.type == TS_LIGHT_POINT) {
      float3 to = v3_sub(make_float3(l.x, l.y, l.z), origin);
      float d2 = v3_dot(to, to), c;
      if (!(d2 > 0.0f)) continue;
      c = v3_dot(n, to) / ts_sqrt(d2);
      if (c <= 0.0f) continue;
      weight = power * c / d2;
      if (!(weight > 0.0f)) continue;
      occluded = scene_intersect_any(scene, origin, to, 0.0f, 0.9999f);
    } else {
      float3 wi = v3_neg(make_float3(l.x, l.y, l.z));
      float c = v3_dot(n, wi);
      if (c <= 0.0f) continue;
      weight = power * c;
      if (!(weight > 0.0f)) continue;
      occluded = scene_intersect_any(scene, origin, wi, 0.0f, TS_INFINITY);
    }
    total += weight;
    if (occluded) blocked += weight;
  }
  return total > 0.0f ? blocked / total : 0.0f;
}

/* The outputs of pixel (px, py) of `cam` as aux_pack gives them. */
TS_FN uint primary_aux_pixel(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs,
                             const AuxSettings* aux, const CameraParams* cam, uint px, uint py) {
  float3 eye = camera_origin(cam);
  float3 dir = camera_direction(cam, (float)px + 0.5f, (float)py + 0.5f);
  float3 org = eye;
  uint segments = 0u;
  while (segments++ < TS_AUX_MAX_SEGMENTS) {
    Hit hit;
    MaterialGpu m;
    if (!scene_intersect_closest(scene, org, dir, 0.0f, TS_INFINITY, &hit)) break;
    /* Only a diffuse surface with a texture that has alpha can be a cut-out: the rest are opaque,
     * and their depth needs no surface (most hits, so the pass stays a traversal and little more). */
    m = ctx->materials[material_of_triangle(ctx->material_runs, ctx->material_run_count, hit.tri)];
    if (m.type == TS_MATERIAL_DIFFUSE && m.texture >= 0 && (ctx->textures[m.texture].flags & TS_TEXTURE_HAS_ALPHA)) {
      Surface s = surface_at(scene, ctx, dir, &hit);
      if (surface_albedo(ctx, &s).w < 0.5f) {
        org = v3_madd(s.p, s.ng, -rs->ray_epsilon); /* cut-out texel: the ray goes on behind it */
        continue;
      }
    }
    return aux_pack(aux_inverse_depth(aux->depth_near, v3_dot(v3_sub(v3_madd(org, dir, hit.t), eye),
                                                              make_float3(cam->fwd_x, cam->fwd_y, cam->fwd_z))),
                    255u);
  }
  if (aux->has_catcher && dir.y != 0.0f) {
    float t = (aux->catcher_height - eye.y) / dir.y;
    if (t > 0.0f && t < TS_INFINITY) {
      float3 n = make_float3(0.0f, eye.y >= aux->catcher_height ? 1.0f : -1.0f, 0.0f);
      float share = aux_blocked_share(scene, ctx, rs, v3_madd(eye, dir, t), n);
      float alpha = ts_fmin(ts_fmax(aux->shadow_opacity * share, 0.0f), 1.0f);
      return aux_pack(0u, (uint)(alpha * 255.0f + 0.5f));
    }
  }
  return aux_pack(0u, 0u);
}

#endif
