/* Lights of the vct mode and the direct light of the level-0 voxels (papers/001 §4.4.1), found with
 * shadow rays through the kd-tree instead of a shadow map. Relighting (a light moved) reruns only
 * this over the active-voxel list, then the mip levels; nothing is voxelized again.
 *
 * Lights: the scene's point and directional lights, and one light per emissive material standing for
 * its triangles (at their area-weighted centroid, intensity = emission x area, falling off with the
 * cosine to the emitter's mean normal on both faces, like kernels/integrators/direct_light.h treats an
 * emitter). Emissive voxels keep no radiance of their own, so cones do not count that light twice. */
#ifndef TESSERA_KERNELS_VCT_VCT_LIGHT_H
#define TESSERA_KERNELS_VCT_VCT_LIGHT_H
#include "kernels/accel/scene_trace.h"
#include "kernels/integrators/direct_light.h"
#include "kernels/vct/vct_common.h"

#define TS_VCT_LIGHT_POINT 0u
#define TS_VCT_LIGHT_DIRECTIONAL 1u
#define TS_VCT_LIGHT_AREA 2u /* a point with a two-sided cosine fall-off around (nx, ny, nz) */
#define TS_VCT_MAX_LIGHTS 16u

/* 48 bytes, scalars only. */
typedef struct VctLight {
  uint type;
  float x, y, z;    /* point / area: position; directional: direction the light travels (unit) */
  float r, g, b;    /* point / area: intensity; directional: irradiance on a surface facing it */
  float nx, ny, nz; /* area: unit normal of the emitter */
  float cone_lift;  /* area: soft-shadow cones aim this far off the emitter, on the receiver's side, so that
                       their last samples do not read the surface the emitter is mounted on */
  float pad0;
} VctLight;

/* Irradiance / pi that the light brings to a point facing it, its direction wi and distance (INFINITY
 * for directional lights); no cosine at the receiver, no visibility. */
TS_FN float3 vct_light_incident(const VctLight* l, float3 p, float3* wi, float* dist) {
  float3 color = make_float3(l->r, l->g, l->b);
  if (l->type == TS_VCT_LIGHT_DIRECTIONAL) {
    *wi = make_float3(-l->x, -l->y, -l->z);
    *dist = TS_INFINITY;
    return v3_scale(color, TS_INV_PI);
  } else {
    float3 to = v3_sub(make_float3(l->x, l->y, l->z), p);
    float d2 = v3_dot(to, to), k;
    if (!(d2 > 0.0f)) {
      *wi = make_float3(0.0f, 0.0f, 1.0f);
      *dist = 0.0f;
      return make_float3(0.0f, 0.0f, 0.0f);
    }
    *dist = ts_sqrt(d2);
    *wi = v3_scale(to, 1.0f / *dist);
    k = TS_INV_PI / d2;
    if (l->type == TS_VCT_LIGHT_AREA) k *= ts_fabs(v3_dot(make_float3(l->nx, l->ny, l->nz), *wi));
    return v3_scale(color, k);
  }
}

/* Radiance word of level-0 voxel `i` under the lights. Voxels are lit from either side (a voxel holds
 * a surface without knowing which side is outside); the shadow ray starts on the voxel's mean surface
 * plane, half a voxel toward the light. */
TS_FN uint vct_relight_voxel(const SceneView* scene, const ColorTables* ct, const VctGridParams* p,
                             TS_GLOBAL const VctLight* lights, uint light_count, uint i, TS_GLOBAL const uint* positions,
                             TS_GLOBAL const uint* albedo, TS_GLOBAL const uint* normal) {
  uint aw = albedo[i], kind = aw >> 24, pw = positions[i], nw = normal[i], l;
  float3 n, c, s, a, e = make_float3(0.0f, 0.0f, 0.0f);
  if (kind == TS_VCT_KIND_INTERIOR) return vct_encode_voxel(e, 1.0f, 1u);
  if (kind != TS_VCT_KIND_SURFACE) return vct_encode_voxel(e, 1.0f, 0u); /* emitter: its light is a VctLight */
  n = vct_decode_normal(nw);
  c = vct_voxel_center(p, 0u, vct_pos_x(pw), vct_pos_y(pw), vct_pos_z(pw));
  s = v3_madd(c, n, -vct_decode_offset(nw) * p->voxel_size);
  a = make_float3(ct->srgb_to_linear[aw & 255u], ct->srgb_to_linear[(aw >> 8) & 255u],
                  ct->srgb_to_linear[(aw >> 16) & 255u]);
  for (l = 0u; l < light_count; ++l) {
    VctLight light = lights[l];
    float3 wi, org, inc;
    float dist, cosine;
    inc = vct_light_incident(&light, s, &wi, &dist);
    cosine = v3_dot(n, wi);
    if (cosine == 0.0f || !(inc.x + inc.y + inc.z > 0.0f)) continue;
    org = v3_madd(s, n, (cosine > 0.0f ? 0.5f : -0.5f) * p->voxel_size);
    if (light.type == TS_VCT_LIGHT_DIRECTIONAL) {
      if (scene_intersect_any(scene, org, wi, 0.0f, TS_INFINITY)) continue;
    } else {
      float3 to = v3_sub(make_float3(light.x, light.y, light.z), org);
      if (v3_dot(to, wi) <= 0.0f) continue;
      if (scene_intersect_any(scene, org, to, 0.0f, 0.9999f)) continue;
    }
    e = v3_madd(e, inc, ts_fabs(cosine));
  }
  return vct_encode_voxel(v3_mul(a, e), 1.0f, 0u);
}

#endif
