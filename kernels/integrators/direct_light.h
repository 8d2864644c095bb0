/* Direct light at a diffuse surface: point and directional lights with one shadow ray each, and
 * emissive triangles by area sampling (from their front faces; an instanced scene's where their
 * instance places them, picked by world-space area). Returns irradiance / pi, to be multiplied by the albedo. */
#ifndef TESSERA_KERNELS_INTEGRATORS_DIRECT_LIGHT_H
#define TESSERA_KERNELS_INTEGRATORS_DIRECT_LIGHT_H
#include "kernels/accel/scene_trace.h"
#include "kernels/render/rng.h"
#include "kernels/shading/surface.h"

#define TS_INV_PI 0.31830988618f

TS_FN float3 direct_light(const SceneView* scene, const ShadingContext* ctx, const RenderSettings* rs, const Surface* s,
                          Rng* rng) {
  float3 sum = make_float3(0.0f, 0.0f, 0.0f);
  float3 origin = v3_madd(s->p, s->ng, rs->ray_epsilon);
  uint i;
  for (i = 0u; i < ctx->light_count; ++i) {
    LightGpu l = ctx->lights[i];
    float3 color = make_float3(l.r, l.g, l.b);
    if (l.type == TS_LIGHT_POINT) {
      float3 to = v3_sub(make_float3(l.x, l.y, l.z), origin);
      float d2 = v3_dot(to, to);
      float inv_d = 1.0f / ts_sqrt(d2);
      float3 wi = v3_scale(to, inv_d);
      float c = v3_dot(s->ns, wi);
      if (c <= 0.0f || v3_dot(s->ng, wi) <= 0.0f) continue;
      if (scene_intersect_any(scene, origin, to, 0.0f, 0.9999f)) continue;
      sum = v3_madd(sum, color, c / d2 * TS_INV_PI);
    } else {
      float3 wi = v3_neg(make_float3(l.x, l.y, l.z));
      float c = v3_dot(s->ns, wi);
      if (c <= 0.0f || v3_dot(s->ng, wi) <= 0.0f) continue;
      if (scene_intersect_any(scene, origin, wi, 0.0f, TS_INFINITY)) continue;
      sum = v3_madd(sum, color, c * TS_INV_PI);
    }
  }
  if (ctx->emitter_count > 0u && rs->light_samples > 0u) {
    float total_area = ctx->emitters[ctx->emitter_count - 1u].area_cdf;
    float weight = total_area / (float)rs->light_samples * TS_INV_PI;
    for (i = 0u; i < rs->light_samples; ++i) {
      uint e = emitter_pick(ctx->emitters, ctx->emitter_count, rng_next(rng));
      uint tri = ctx->emitters[e].tri;
      float3 p0, p1, p2, q, to, wi, nl;
      float d2, cs, cl, u1 = rng_next(rng), u2 = rng_next(rng);
      MaterialGpu m;
      scene_triangle_vertices(scene, tri, &p0, &p1, &p2);
      scene_instance_to_world(scene, ctx->emitters[e].inst, &p0, &p1, &p2);
      q = triangle_sample(p0, p1, p2, u1, u2);
      to = v3_sub(q, origin);
      d2 = v3_dot(to, to);
      if (d2 <= 0.0f) continue;
      wi = v3_scale(to, 1.0f / ts_sqrt(d2));
      cs = v3_dot(s->ns, wi);
      if (cs <= 0.0f || v3_dot(s->ng, wi) <= 0.0f) continue;
      nl = v3_normalize(v3_cross(v3_sub(p1, p0), v3_sub(p2, p0)));
      /* Emitters shine from the face their winding fronts (as glTF and most renderers define it).
       * Two-sided, a lamp mounted a hair below a ceiling lit the slit above it with 1/d^2 of a
       * fraction of a millimetre, and the rare bounce ray that found the slit became a firefly. */
      cl = -v3_dot(nl, wi);
      if (cl <= 0.0f) continue;
      if (scene_intersect_any(scene, origin, to, 0.0f, 0.999f)) continue;
      m = ctx->materials[material_of_triangle(ctx->material_runs, ctx->material_run_count, tri)];
      sum = v3_madd(sum, make_float3(m.emission_r, m.emission_g, m.emission_b), cs * cl / d2 * weight);
    }
  }
  return sum;
}

#endif
