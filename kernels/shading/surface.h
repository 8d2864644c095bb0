/* The surface at a ray hit: position, normals, texture coordinate and material. */
#ifndef TESSERA_KERNELS_SHADING_SURFACE_H
#define TESSERA_KERNELS_SHADING_SURFACE_H
#include "kernels/accel/kdtree_traverse.h"
#include "kernels/shading/shading_context.h"
#include "kernels/shading/texture_filter.h"

typedef struct Surface {
  float3 p;       /* hit point, interpolated from the vertices */
  float3 ng;      /* geometric normal, facing the incoming ray */
  float3 ns;      /* shading normal, on the same side as ng */
  float2 uv;
  float uv_per_area; /* the triangle's texture-coordinate area over its world area (0: no texcoords) */
  uint material;
  int front;      /* 1 when the ray hit the side the triangle's winding faces */
} Surface;

TS_FN Surface surface_at(const SceneView* scene, const ShadingContext* ctx, float3 dir, const Hit* hit) {
  Surface s;
  TS_GLOBAL const uint* t = scene->triangles + 3u * hit->tri;
  float3 p0, p1, p2;
  float w = 1.0f - hit->u - hit->v;
  scene_triangle_vertices(scene, hit->tri, &p0, &p1, &p2);
  s.p = v3_add(v3_add(v3_scale(p0, w), v3_scale(p1, hit->u)), v3_scale(p2, hit->v));
  s.ng = v3_normalize(v3_cross(v3_sub(p1, p0), v3_sub(p2, p0)));
  s.front = v3_dot(s.ng, dir) < 0.0f;
  if (!s.front) s.ng = v3_neg(s.ng);
  s.ns = s.ng;
  if (scene->flags & TS_SCENE_HAS_NORMALS) {
    float3 n = v3_add(v3_add(v3_scale(scene_vertex_normal(scene, t[0]), w), v3_scale(scene_vertex_normal(scene, t[1]), hit->u)),
                      v3_scale(scene_vertex_normal(scene, t[2]), hit->v));
    n = v3_normalize(n);
    if (v3_dot(n, s.ng) < 0.0f) n = v3_neg(n);
    s.ns = n;
  }
  s.material = material_of_triangle(ctx->material_runs, ctx->material_run_count, hit->tri);
  s.uv = make_float2(0.0f, 0.0f);
  s.uv_per_area = 0.0f;
  if (scene->flags & TS_SCENE_HAS_TEXCOORDS) {
    float q = ctx->materials[s.material].texcoord_scale;
    float2 a = scene_vertex_texcoord(scene, t[0], q), b = scene_vertex_texcoord(scene, t[1], q);
    float2 c = scene_vertex_texcoord(scene, t[2], q);
    float uv_area2 = ts_fabs((b.x - a.x) * (c.y - a.y) - (c.x - a.x) * (b.y - a.y));
    float world_area2 = v3_length(v3_cross(v3_sub(p1, p0), v3_sub(p2, p0)));
    s.uv = make_float2(a.x * w + b.x * hit->u + c.x * hit->v, a.y * w + b.y * hit->u + c.y * hit->v);
    s.uv_per_area = world_area2 > 0.0f ? uv_area2 / world_area2 : 0.0f;
  }
  return s;
}

/* Curvature of the surface around a hit, estimated from the triangle's vertex normals as in
 * Akenine-Moeller et al. 2021 (ray cones): along each edge (n_j - n_i) . (p_j - p_i) / |p_j - p_i|^2,
 * averaged over the three edges; 1 / r on a sphere of radius r. Positive where the surface bulges
 * toward the ray (convex as seen from its side), 0 for flat-shaded triangles. */
TS_FN float surface_curvature(const SceneView* scene, const Surface* s, uint tri) {
  TS_GLOBAL const uint* t = scene->triangles + 3u * tri;
  float3 p[3], n[3];
  float k = 0.0f;
  uint i;
  if (!(scene->flags & TS_SCENE_HAS_NORMALS)) return 0.0f;
  scene_triangle_vertices(scene, tri, &p[0], &p[1], &p[2]);
  for (i = 0u; i < 3u; ++i) n[i] = scene_vertex_normal(scene, t[i]);
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

/* Diffuse reflectance (material colour times texture) and texture alpha at a surface, the texture
 * filtered over `footprint` (world-space width of the ray cone on the surface, |W| / |n . d|; 0: the
 * bilinear lookup in level 0). */
TS_FN float4 surface_albedo_filtered(const ShadingContext* ctx, const Surface* s, float footprint) {
  MaterialGpu m = ctx->materials[s->material];
  float4 a = make_float4(m.diffuse_r, m.diffuse_g, m.diffuse_b, 1.0f);
  if (m.texture >= 0) {
    TextureGpu tex = ctx->textures[m.texture];
    float lod = footprint > 0.0f ? texture_lod(&tex, s->uv_per_area, footprint) : 0.0f;
    float4 t = texture_sample(&ctx->color, ctx->texels, &tex, s->uv.x, s->uv.y, lod);
    a = make_float4(a.x * t.x, a.y * t.y, a.z * t.z, (tex.flags & TS_TEXTURE_HAS_ALPHA) ? t.w : 1.0f);
  }
  return a;
}

/* Diffuse reflectance and alpha from texture level 0 (paths that carry no ray cone). */
TS_FN float4 surface_albedo(const ShadingContext* ctx, const Surface* s) { return surface_albedo_filtered(ctx, s, 0.0f); }

#endif
