/* Small float and int vectors for code that runs on CPUs, where one core tests several triangles,
 * or several rays, at once with SIMD instructions instead of one after the other. OpenCL C has
 * floatN and intN; on the host GCC/Clang vector extensions give the same element-wise arithmetic,
 * which rounds exactly like scalar code (no contraction on either side), so a result never depends
 * on the width. OpenCL CPU devices use 8 lanes (their compiler targets the CPU it runs on: AVX,
 * AVX-512, or NEON in pairs); the host build 4, as it targets plain x86-64 (SSE2).
 *
 * Comparisons give -1 (true) or 0 per lane. ts_simd_select(a, b, mask) is b where mask, else a. */
#ifndef TESSERA_KERNELS_BASE_SIMD_H
#define TESSERA_KERNELS_BASE_SIMD_H
#include "kernels/base/compat.h"

#define TS_SIMD_LANES_OPENCL_CPU 8u
#define TS_SIMD_LANES_HOST 4u

#ifdef TS_DEVICE_OPENCL
#define TS_SIMD_LANES TS_SIMD_LANES_OPENCL_CPU
typedef float8 ts_floatv;
typedef int8 ts_intv;
typedef uint8 ts_uintv;
TS_FN ts_floatv ts_simd_load(const float* p) { return vload8(0, p); }
TS_FN ts_uintv ts_simd_load_uint(const uint* p) { return vload8(0, p); }
TS_FN ts_intv ts_simd_load_int(const int* p) { return vload8(0, p); }
TS_FN void ts_simd_store(ts_floatv v, float* p) { vstore8(v, 0, p); }
TS_FN void ts_simd_store_int(ts_intv v, int* p) { vstore8(v, 0, p); }
TS_FN ts_floatv ts_simd_splat(float x) { return (ts_floatv)(x); }
TS_FN ts_floatv ts_simd_from_uint(ts_uintv v) { return convert_float8(v); }
TS_FN ts_floatv ts_simd_fma(ts_floatv a, ts_floatv b, ts_floatv c) { return fma(a, b, c); }
TS_FN ts_intv ts_simd_splat_int(int x) { return (ts_intv)(x); }
TS_FN int ts_simd_any(ts_intv mask) { return any(mask); }
TS_FN ts_floatv ts_simd_min(ts_floatv a, ts_floatv b) { return fmin(a, b); }
TS_FN ts_floatv ts_simd_max(ts_floatv a, ts_floatv b) { return fmax(a, b); }
TS_FN float ts_simd_lane(ts_floatv v, uint i) { float a[TS_SIMD_LANES]; vstore8(v, 0, a); return a[i]; }
#define ts_simd_select(a, b, mask) select(a, b, mask)
#else
#define TS_SIMD_LANES TS_SIMD_LANES_HOST
typedef float ts_floatv __attribute__((vector_size(16)));
typedef int ts_intv __attribute__((vector_size(16)));
typedef uint ts_uintv __attribute__((vector_size(16)));
TS_FN ts_floatv ts_simd_load(const float* p) { ts_floatv v; memcpy(&v, p, sizeof v); return v; }
TS_FN ts_uintv ts_simd_load_uint(const uint* p) { ts_uintv v; memcpy(&v, p, sizeof v); return v; }
TS_FN ts_intv ts_simd_load_int(const int* p) { ts_intv v; memcpy(&v, p, sizeof v); return v; }
TS_FN void ts_simd_store(ts_floatv v, float* p) { memcpy(p, &v, sizeof v); }
TS_FN void ts_simd_store_int(ts_intv v, int* p) { memcpy(p, &v, sizeof v); }
TS_FN ts_floatv ts_simd_splat(float x) { return ts_floatv{x, x, x, x}; }
TS_FN ts_floatv ts_simd_from_uint(ts_uintv v) { return __builtin_convertvector(v, ts_floatv); }
/* a * b + c rounded once, lane by lane (plain x86-64 has no fused multiply-add instruction to name) */
TS_FN ts_floatv ts_simd_fma(ts_floatv a, ts_floatv b, ts_floatv c) {
  return ts_floatv{fmaf(a[0], b[0], c[0]), fmaf(a[1], b[1], c[1]), fmaf(a[2], b[2], c[2]), fmaf(a[3], b[3], c[3])};
}
TS_FN ts_intv ts_simd_splat_int(int x) { return ts_intv{x, x, x, x}; }
TS_FN int ts_simd_any(ts_intv mask) { return (mask[0] | mask[1] | mask[2] | mask[3]) != 0; }
/* fmin/fmax per lane: a NaN in b gives a, as fmin/fmax do (callers put a possible NaN there) */
TS_FN ts_floatv ts_simd_min(ts_floatv a, ts_floatv b) { return b < a ? b : a; }
TS_FN ts_floatv ts_simd_max(ts_floatv a, ts_floatv b) { return b > a ? b : a; }
TS_FN float ts_simd_lane(ts_floatv v, uint i) { return v[i]; }
#define ts_simd_select(a, b, mask) ((mask) ? (b) : (a))
#endif

#endif
