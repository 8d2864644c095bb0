/* The surface at a ray hit: position, normals, texture coordinate and material. */
#ifndef TESSERA_KERNELS_SHADING_SURFACE_H
#define TESSERA_KERNELS_SHADING_SURFACE_H
#include "kernels/accel/kdtree_traverse.h"
#include "kernels/accel/scene_trace.h"
#include "kernels/shading/shading_context.h"
#include "kernels/shading/texture_filter.h"

typedef struct Surface {
  float3 p;       /* hit point, interpolated from the vertices */
  float3 ng;      /* geometric normal, facing the incoming ray */
  float3 ns;      /* shading normal, on the same side as ng */
  float2 uv;
  float uv_per_area; /* the triangle's texture-coordinate area over its world area (0: no texcoords) */
  float2 uv_along;   /* uv change per unit of world length along the ray's direction projected onto the
                        triangle: the long axis of a ray cone's footprint (0: no texcoords, or head-on) */
  float cos_view;    /* |n . d| at the hit: the footprint is 1 / cos_view times longer than wide */
  uint material;
  int front;      /* 1 when the ray hit the side the triangle's winding faces */
#ifdef TS_SCENE_INSTANCE_FIELDS
  uint inst;      /* an instanced scene's hit: its instance's top-level slot (Hit.inst) */
#endif
} Surface;

/* The uv change per unit of world length along `along` (a direction in the triangle's plane, any
 * length): `along` written as a e1 + b e2 over the triangle's edges (normal equations of the 2x2 Gram
 * matrix), then the same combination of the edges' uv differences. */
TS_FN float2 surface_uv_along(float3 p0, float3 p1, float3 p2, float2 a, float2 b, float2 c, float3 along) {
  float3 e1 = v3_sub(p1, p0), e2 = v3_sub(p2, p0);
  float len = v3_length(along);
  float g11 = v3_dot(e1, e1), g12 = v3_dot(e1, e2), g22 = v3_dot(e2, e2);
  float det = g11 * g22 - g12 * g12, r1, r2, x, y;
  if (!(len > 0.0f) || !(det > 0.0f)) return make_float2(0.0f, 0.0f);
  along = v3_scale(along, 1.0f / len);
  r1 = v3_dot(along, e1);
  r2 = v3_dot(along, e2);
  x = (g22 * r1 - g12 * r2) / det;
  y = (g11 * r2 - g12 * r1) / det;
  return make_float2(x * (b.x - a.x) + y * (c.x - a.x), x * (b.y - a.y) + y * (c.y - a.y));
}

TS_FN Surface surface_at(const SceneView* scene, const ShadingContext* ctx, float3 dir, const Hit* hit) {
  Surface s;
  uint4 t = scene_triangle_indices(scene, hit->tri);
  float3 p0, p1, p2;
  float w = 1.0f - hit->u - hit->v;
  scene_triangle_vertices(scene, hit->tri, &p0, &p1, &p2);
  scene_hit_to_world(scene, hit, &p0, &p1, &p2); /* an instance's triangle where it is placed */
  s.p = v3_add(v3_add(v3_scale(p0, w), v3_scale(p1, hit->u)), v3_scale(p2, hit->v));
  s.ng = v3_normalize(v3_cross(v3_sub(p1, p0), v3_sub(p2, p0)));
  s.cos_view = ts_fabs(v3_dot(s.ng, dir));
  s.front = v3_dot(s.ng, dir) < 0.0f;
  if (!s.front) s.ng = v3_neg(s.ng);
  s.ns = s.ng;
  if (scene_flags(scene) & TS_SCENE_HAS_NORMALS) {
    float3 n = v3_add(v3_add(v3_scale(scene_vertex_normal(scene, t.x), w), v3_scale(scene_vertex_normal(scene, t.y), hit->u)),
                      v3_scale(scene_vertex_normal(scene, t.z), hit->v));
    n = scene_normal_to_world(scene, hit, v3_normalize(n));
    if (v3_dot(n, s.ng) < 0.0f) n = v3_neg(n);
    s.ns = n;
  }
  s.material = material_of_triangle(ctx->material_runs, ctx->material_run_count, hit->tri);
#ifdef TS_SCENE_INSTANCE_FIELDS
  s.inst = (scene_flags(scene) & TS_SCENE_INSTANCED) ? hit->inst : TS_NO_INSTANCE; /* single-level hits leave it unset */
#endif
  s.uv = make_float2(0.0f, 0.0f);
  s.uv_per_area = 0.0f;
  s.uv_along = make_float2(0.0f, 0.0f);
  if (scene_flags(scene) & TS_SCENE_HAS_TEXCOORDS) {
    float q = ctx->materials[s.material].texcoord_scale;
    float2 a = scene_vertex_texcoord(scene, t.x, q), b = scene_vertex_texcoord(scene, t.y, q);
    float2 c = scene_vertex_texcoord(scene, t.z, q);
    float uv_area2 = ts_fabs((b.x - a.x) * (c.y - a.y) - (c.x - a.x) * (b.y - a.y));
    float world_area2 = v3_length(v3_cross(v3_sub(p1, p0), v3_sub(p2, p0)));
    s.uv = make_float2(a.x * w + b.x * hit->u + c.x * hit->v, a.y * w + b.y * hit->u + c.y * hit->v);
    s.uv_per_area = world_area2 > 0.0f ? uv_area2 / world_area2 : 0.0f;
    s.uv_along = surface_uv_along(p0, p1, p2, a, b, c, v3_sub(dir, v3_scale(s.ng, v3_dot(dir, s.ng))));
  }
  return s;
}

/* Curvature of the surface around a hit, estimated from the triangle's vertex normals as in
 * Akenine-Moeller et al. 2021 (ray cones): along each edge (n_j - n_i) . (p_j - p_i) / |p_j - p_i|^2,
 * averaged over the three edges; 1 / r on a sphere of radius r. Positive where the surface bulges
 * toward the ray (convex as seen from its side), 0 for flat-shaded triangles. An instance's corners
 * and normals are taken to world space first (s comes from surface_at), so a scaled object curves
 * as it is shown. */
TS_FN float surface_curvature(const SceneView* scene, const Surface* s, uint tri) {
  uint4 t = scene_triangle_indices(scene, tri);
  uint ti[3];
  float3 p[3], n[3];
  float k = 0.0f;
  uint i;
  if (!(scene_flags(scene) & TS_SCENE_HAS_NORMALS)) return 0.0f;
  scene_triangle_vertices(scene, tri, &p[0], &p[1], &p[2]);
  ti[0] = t.x;
  ti[1] = t.y;
  ti[2] = t.z;
  for (i = 0u; i < 3u; ++i) n[i] = scene_vertex_normal(scene, ti[i]);
#ifdef TS_SCENE_INSTANCE_FIELDS
  scene_instance_to_world(scene, s->inst, &p[0], &p[1], &p[2]);
  for (i = 0u; i < 3u; ++i) n[i] = scene_instance_normal_to_world(scene, s->inst, n[i]);
#endif
  for (i = 0u; i < 3u; ++i) {
    uint j = i == 2u ? 0u : i + 1u;
    float3 e = v3_sub(p[j], p[i]);
    float len2 = v3_dot(e, e);
    if (len2 > 0.0f) k += v3_dot(v3_sub(n[j], n[i]), e) / len2;
  }
  k *= 1.0f / 3.0f;
  /* vertex normals follow the winding's side; seen from the other side the surface bends the other way */
  return s->front ? k : -k;
}

/* At most this many trilinear taps along a footprint's long axis; beyond, each tap widens. */
#define TS_TEXTURE_MAX_TAPS 8u

/* Diffuse reflectance (material colour times texture) and texture alpha at a surface, the texture
 * filtered over the footprint of a ray cone `width` wide there (0: the bilinear lookup in level 0).
 * Anisotropic, after Akenine-Moeller et al. 2021: seen at |n . d| = c the footprint is `width` across
 * and width / c along the ray's projected direction, so the level comes from the short axis and up to
 * TS_TEXTURE_MAX_TAPS trilinear taps spread along the long one are averaged. One isotropic lookup of
 * the long axis (the 2019 form) blurs floors and walls seen at grazing angles. */
TS_FN float4 surface_albedo_cone(const ShadingContext* ctx, const Surface* s, float width) {
  MaterialGpu m = ctx->materials[s->material];
  float4 a = make_float4(m.diffuse_r, m.diffuse_g, m.diffuse_b, 1.0f);
  if (m.texture >= 0) {
    TextureGpu tex = ctx->textures[m.texture];
    float4 t;
    if (width == 0.0f) {
      t = texture_sample(&ctx->color, ctx->texels, &tex, s->uv.x, s->uv.y, 0.0f);
    } else {
      float minor = ts_fabs(width);
      float major = minor / ts_fmax(s->cos_view, 1e-4f);
      float ratio = major / minor;
      uint taps = ratio >= (float)TS_TEXTURE_MAX_TAPS ? TS_TEXTURE_MAX_TAPS : (uint)ts_floor(ratio - 1e-3f) + 1u;
      float step = major / (float)taps; /* each tap's share of the long axis */
      float lod = texture_lod(&tex, s->uv_per_area, ts_sqrt(minor * step));
      uint i;
      t = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      for (i = 0u; i < taps; ++i) {
        float off = step * ((float)i + 0.5f) - 0.5f * major;
        float4 tap = texture_sample(&ctx->color, ctx->texels, &tex, s->uv.x + s->uv_along.x * off,
                                    s->uv.y + s->uv_along.y * off, lod);
        t = make_float4(t.x + tap.x, t.y + tap.y, t.z + tap.z, t.w + tap.w);
      }
      t = make_float4(t.x / (float)taps, t.y / (float)taps, t.z / (float)taps, t.w / (float)taps);
    }
    a = make_float4(a.x * t.x, a.y * t.y, a.z * t.z, (tex.flags & TS_TEXTURE_HAS_ALPHA) ? t.w : 1.0f);
  }
  return a;
}

/* Diffuse reflectance and alpha from texture level 0 (paths that carry no ray cone). */
TS_FN float4 surface_albedo(const ShadingContext* ctx, const Surface* s) { return surface_albedo_cone(ctx, s, 0.0f); }

#endif
