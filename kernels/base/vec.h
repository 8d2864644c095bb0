/* Vector math written as functions, so the same expressions compile as OpenCL C and on the host. */
#ifndef TESSERA_KERNELS_BASE_VEC_H
#define TESSERA_KERNELS_BASE_VEC_H
#include "kernels/base/compat.h"

TS_FN float3 v3_add(float3 a, float3 b) { return make_float3(a.x + b.x, a.y + b.y, a.z + b.z); }
TS_FN float3 v3_sub(float3 a, float3 b) { return make_float3(a.x - b.x, a.y - b.y, a.z - b.z); }
TS_FN float3 v3_mul(float3 a, float3 b) { return make_float3(a.x * b.x, a.y * b.y, a.z * b.z); }
TS_FN float3 v3_scale(float3 a, float s) { return make_float3(a.x * s, a.y * s, a.z * s); }
TS_FN float3 v3_neg(float3 a) { return make_float3(-a.x, -a.y, -a.z); }
TS_FN float v3_dot(float3 a, float3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
TS_FN float3 v3_cross(float3 a, float3 b) {
  return make_float3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
TS_FN float v3_length(float3 a) { return ts_sqrt(v3_dot(a, a)); }
TS_FN float3 v3_normalize(float3 a) {
  float len = v3_length(a);
  return len > 0.0f ? v3_scale(a, 1.0f / len) : a;
}
TS_FN float3 v3_min(float3 a, float3 b) { return make_float3(ts_fmin(a.x, b.x), ts_fmin(a.y, b.y), ts_fmin(a.z, b.z)); }
TS_FN float3 v3_max(float3 a, float3 b) { return make_float3(ts_fmax(a.x, b.x), ts_fmax(a.y, b.y), ts_fmax(a.z, b.z)); }
TS_FN float v3_get(float3 a, uint axis) { return axis == 0u ? a.x : (axis == 1u ? a.y : a.z); }
/* a + b * s, written out so both backends round identically (no contraction). */
TS_FN float3 v3_madd(float3 a, float3 b, float s) { return v3_add(a, v3_scale(b, s)); }
TS_FN float3 v3_load(TS_GLOBAL const float* p) { return make_float3(p[0], p[1], p[2]); }

#endif
