/* The surface at a ray hit: position, normals, texture coordinate and material. */
#ifndef TESSERA_KERNELS_SHADING_SURFACE_H
#define TESSERA_KERNELS_SHADING_SURFACE_H
#include "kernels/accel/kdtree_traverse.h"
#include "kernels/shading/shading_context.h"

typedef struct Surface {
  float3 p;       /* hit point, interpolated from the vertices */
  float3 ng;      /* geometric normal, facing the incoming ray */
  float3 ns;      /* shading normal, on the same side as ng */
  float2 uv;
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
  if (scene->flags & TS_SCENE_HAS_TEXCOORDS) {
    float q = ctx->materials[s.material].texcoord_scale;
    float2 a = scene_vertex_texcoord(scene, t[0], q), b = scene_vertex_texcoord(scene, t[1], q);
    float2 c = scene_vertex_texcoord(scene, t[2], q);
    s.uv = make_float2(a.x * w + b.x * hit->u + c.x * hit->v, a.y * w + b.y * hit->u + c.y * hit->v);
  }
  return s;
}

/* Diffuse reflectance (material colour times texture) and texture alpha at a surface. */
TS_FN float4 surface_albedo(const ShadingContext* ctx, const Surface* s) {
  MaterialGpu m = ctx->materials[s->material];
  float4 a = make_float4(m.diffuse_r, m.diffuse_g, m.diffuse_b, 1.0f);
  if (m.texture >= 0) {
    TextureGpu tex = ctx->textures[m.texture];
    float4 t = texture_sample(&ctx->color, ctx->texels, &tex, s->uv.x, s->uv.y);
    a = make_float4(a.x * t.x, a.y * t.y, a.z * t.z, (tex.flags & TS_TEXTURE_HAS_ALPHA) ? t.w : 1.0f);
  }
  return a;
}

#endif
