/* The common subset of OpenCL C and host C/C++ that every header under kernels/ is written in.
 * On the device, OpenCL's own vector types and math are used; on the host the same names are
 * given plain definitions so the headers compile into the CPU reference renderer and the tests. */
#ifndef TESSERA_KERNELS_BASE_COMPAT_H
#define TESSERA_KERNELS_BASE_COMPAT_H

#ifdef __OPENCL_C_VERSION__
#define TS_DEVICE_OPENCL 1
#define TS_GLOBAL __global
#define TS_CONSTANT __constant
#define TS_FN inline
#pragma OPENCL FP_CONTRACT OFF
#define ts_sqrt(x) sqrt(x)
#define ts_fabs(x) fabs(x)
#define ts_fmin(a, b) fmin(a, b)
#define ts_fmax(a, b) fmax(a, b)
#define ts_floor(x) floor(x)
#define ts_fma(a, b, c) fma(a, b, c)
#define ts_pow(a, b) pow(a, b)
#define ts_exp(x) exp(x)
#define ts_log2(x) log2(x)
#define ts_cos(x) cos(x)
#define ts_sin(x) sin(x)
#define ts_as_float(u) as_float(u)
#define ts_as_uint(f) as_uint(f)
#define TS_INFINITY INFINITY
/* IEEE half stored as 16 bits; vload_half is core OpenCL 1.2 (no cl_khr_fp16 needed). */
TS_FN float ts_half_to_float(TS_GLOBAL const ushort* p) { return vload_half(0, (TS_GLOBAL const half*)p); }
TS_FN float3 make_float3(float x, float y, float z) { return (float3)(x, y, z); }
TS_FN float2 make_float2(float x, float y) { return (float2)(x, y); }
TS_FN float4 make_float4(float x, float y, float z, float w) { return (float4)(x, y, z, w); }

#else /* host */
#include <math.h>
#include <stdint.h>
#include <string.h>
#define TS_GLOBAL
#define TS_CONSTANT
#define TS_FN static inline
typedef uint32_t uint;
typedef uint16_t ushort;
typedef uint8_t uchar;
typedef struct float2 { float x, y; } float2;
typedef struct float3 { float x, y, z; } float3;
typedef struct float4 { float x, y, z, w; } float4;
typedef struct uint2 { uint x, y; } uint2;
typedef struct uint4 { uint x, y, z, w; } uint4;
#define ts_sqrt(x) sqrtf(x)
#define ts_fabs(x) fabsf(x)
#define ts_fmin(a, b) fminf(a, b)
#define ts_fmax(a, b) fmaxf(a, b)
#define ts_floor(x) floorf(x)
#define ts_fma(a, b, c) fmaf(a, b, c) /* correctly rounded, as OpenCL's fma */
#define ts_pow(a, b) powf(a, b)
#define ts_exp(x) expf(x)
#define ts_log2(x) log2f(x)
#define ts_cos(x) cosf(x)
#define ts_sin(x) sinf(x)
#define TS_INFINITY INFINITY
TS_FN float ts_as_float(uint u) { float f; memcpy(&f, &u, sizeof f); return f; }
TS_FN uint ts_as_uint(float f) { uint u; memcpy(&u, &f, sizeof u); return u; }
TS_FN float3 make_float3(float x, float y, float z) { float3 v; v.x = x; v.y = y; v.z = z; return v; }
TS_FN float ts_half_bits_to_float(uint h) {
  uint sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
  if (exponent == 0u) { /* zero or subnormal: mantissa * 2^-24 */
    float f = (float)mantissa * 5.9604644775390625e-8f;
    return sign ? -f : f;
  }
  if (exponent == 31u) return ts_as_float(sign | 0x7F800000u | (mantissa << 13));
  return ts_as_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}
TS_FN float ts_half_to_float(TS_GLOBAL const ushort* p) { return ts_half_bits_to_float(*p); }
TS_FN float2 make_float2(float x, float y) { float2 v; v.x = x; v.y = y; return v; }
TS_FN float4 make_float4(float x, float y, float z, float w) { float4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
#endif

#endif
