/* Point and directional lights from the scene settings, and emissive triangles sampled by area. */
#ifndef TESSERA_KERNELS_SHADING_LIGHTS_H
#define TESSERA_KERNELS_SHADING_LIGHTS_H
#include "kernels/base/vec.h"

#define TS_LIGHT_POINT 0u
#define TS_LIGHT_DIRECTIONAL 1u

typedef struct LightGpu {
  uint type;
  float x, y, z;    /* point: position; directional: direction the light travels (unit) */
  float r, g, b;    /* point: intensity; directional: irradiance on a surface facing it */
  float pad;
} LightGpu;

/* Emissive triangles for next-event estimation: triangle index and the running sum of areas
 * (so a uniform number picks a triangle with probability proportional to its area). An instanced
 * scene lists each emissive triangle once for every instance that places it, areas in world space
 * (common/render/instance_emitters.h, rebuilt whenever the instances move). 16 bytes. */
typedef struct EmitterGpu {
  uint tri;
  float area_cdf; /* total area of this and every earlier emitter */
  uint inst;      /* an instanced scene's: the slot of the instance in the top level (unused in others) */
  uint pad;
} EmitterGpu;

/* A triangle's area (emitter lists sum these). */
TS_FN float triangle_area(float3 p0, float3 p1, float3 p2) {
  return 0.5f * v3_length(v3_cross(v3_sub(p1, p0), v3_sub(p2, p0)));
}

/* Index of the emitter whose CDF interval holds xi * total. */
TS_FN uint emitter_pick(TS_GLOBAL const EmitterGpu* emitters, uint count, float xi) {
  float target = xi * emitters[count - 1u].area_cdf;
  uint lo = 0u, hi = count - 1u;
  while (lo < hi) {
    uint mid = (lo + hi) >> 1;
    if (emitters[mid].area_cdf > target) hi = mid;
    else lo = mid + 1u;
  }
  return lo;
}

/* Uniform point on a triangle from two uniform numbers. */
TS_FN float3 triangle_sample(float3 p0, float3 p1, float3 p2, float u1, float u2) {
  float su = ts_sqrt(u1);
  float b0 = 1.0f - su, b1 = u2 * su;
  return v3_add(v3_add(v3_scale(p0, b0), v3_scale(p1, b1)), v3_scale(p2, 1.0f - b0 - b1));
}

#endif
