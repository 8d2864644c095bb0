/* What the `vct` mode's primary ray leaves for the shading of a pixel: the first opaque surface (or the
 * radiance that ends the pixel there: background, emissive material). The OpenCL tile render keeps one
 * record a pixel in a buffer between its two kernels, as four float4 planes (plane k of pixel i at
 * k * count + i, so neighbouring work items read neighbouring float4s); the floats are stored as they
 * are, so both kernels together shade exactly as one. */
#ifndef TESSERA_KERNELS_VCT_VCT_SURFACE_H
#define TESSERA_KERNELS_VCT_VCT_SURFACE_H
#include "kernels/base/compat.h"

#define TS_VCT_SURFACE_BACKGROUND 0u /* color: the background */
#define TS_VCT_SURFACE_EMISSIVE 1u   /* color: the material's emission */
#define TS_VCT_SURFACE_LIT 2u        /* color: the albedo; p, ng, ns: the hit */
#define TS_VCT_SURFACE_PLANES 4u

typedef struct VctSurfaceRecord {
  float3 p;     /* hit point */
  float3 ng;    /* geometric normal, facing the ray */
  float3 ns;    /* shading normal */
  float3 color; /* see the kinds */
  uint kind;    /* TS_VCT_SURFACE_* */
} VctSurfaceRecord;

TS_FN VctSurfaceRecord vct_surface_radiance(uint kind, float3 color) {
  VctSurfaceRecord r;
  r.p = r.ng = r.ns = make_float3(0.0f, 0.0f, 0.0f);
  r.color = color;
  r.kind = kind;
  return r;
}

TS_FN void vct_surface_store(TS_GLOBAL float4* planes, uint count, uint i, const VctSurfaceRecord* r) {
  planes[i] = make_float4(r->p.x, r->p.y, r->p.z, (float)r->kind);
  planes[count + i] = make_float4(r->color.x, r->color.y, r->color.z, 0.0f);
  planes[2u * count + i] = make_float4(r->ng.x, r->ng.y, r->ng.z, 0.0f);
  planes[3u * count + i] = make_float4(r->ns.x, r->ns.y, r->ns.z, 0.0f);
}

TS_FN VctSurfaceRecord vct_surface_load(TS_GLOBAL const float4* planes, uint count, uint i) {
  float4 a = planes[i], c = planes[count + i];
  VctSurfaceRecord r = vct_surface_radiance((uint)a.w, make_float3(c.x, c.y, c.z));
  if (r.kind == TS_VCT_SURFACE_LIT) { /* the other kinds need no geometry */
    float4 ng = planes[2u * count + i], ns = planes[3u * count + i];
    r.p = make_float3(a.x, a.y, a.z);
    r.ng = make_float3(ng.x, ng.y, ng.z);
    r.ns = make_float3(ns.x, ns.y, ns.z);
  }
  return r;
}

#endif
