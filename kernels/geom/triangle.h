/* Watertight ray-triangle intersection (Woop, Benthin, Wald 2013, "Watertight Ray/Triangle
 * Intersection"). The ray is sheared once so that it runs along +z from the origin; each triangle is
 * then tested with 2D edge functions in that space. A point on a shared edge is inside both triangles
 * (edge functions of 0 count as inside), so rays never slip between neighbours. The paper's double
 * precision fallback for edge functions that are exactly 0 is left out: OpenCL 1.2 devices need not
 * have doubles, and counting 0 as inside already closes the gaps.
 *
 * Barycentrics: the hit point is (1 - u - v) * p0 + u * p1 + v * p2. */
#ifndef TESSERA_KERNELS_GEOM_TRIANGLE_H
#define TESSERA_KERNELS_GEOM_TRIANGLE_H
#include "kernels/base/vec.h"

/* Per-ray constants of the test, computed once by triangle_ray_setup. */
typedef struct TriangleRay {
  float3 org;
  uint kx, ky, kz;  /* kz: dominant axis of the direction; kx, ky: the other two, winding kept */
  float sx, sy, sz; /* shear: x' = x - sx * z, y' = y - sy * z, z' = sz * z */
} TriangleRay;

TS_FN TriangleRay triangle_ray_setup(float3 org, float3 dir) {
  TriangleRay r;
  float ax = ts_fabs(dir.x), ay = ts_fabs(dir.y), az = ts_fabs(dir.z);
  uint kz = (ax >= ay && ax >= az) ? 0u : (ay >= az ? 1u : 2u);
  uint kx = kz == 2u ? 0u : kz + 1u;
  uint ky = kx == 2u ? 0u : kx + 1u;
  float dz = v3_get(dir, kz);
  if (dz < 0.0f) { /* swapping keeps the sign of the edge functions independent of the direction */
    uint tmp = kx;
    kx = ky;
    ky = tmp;
  }
  r.org = org;
  r.kx = kx;
  r.ky = ky;
  r.kz = kz;
  r.sx = v3_get(dir, kx) / dz;
  r.sy = v3_get(dir, ky) / dz;
  r.sz = 1.0f / dz;
  return r;
}

/* Returns 1 and writes t, u, v when the ray hits the triangle at tmin < t < tmax, or at t == tmax
 * too when tie is set (the traversal's rule for equally near hits, kernels/accel/kdtree_traverse.h). */
TS_FN int triangle_intersect_tie(const TriangleRay* r, float3 p0, float3 p1, float3 p2, float tmin, float tmax, int tie,
                                 float* t_out, float* u_out, float* v_out) {
  float3 a = v3_sub(p0, r->org);
  float3 b = v3_sub(p1, r->org);
  float3 c = v3_sub(p2, r->org);
  float az = v3_get(a, r->kz), bz = v3_get(b, r->kz), cz = v3_get(c, r->kz);
  float ax = v3_get(a, r->kx) - r->sx * az, ay = v3_get(a, r->ky) - r->sy * az;
  float bx = v3_get(b, r->kx) - r->sx * bz, by = v3_get(b, r->ky) - r->sy * bz;
  float cx = v3_get(c, r->kx) - r->sx * cz, cy = v3_get(c, r->ky) - r->sy * cz;
  float eu = cx * by - cy * bx; /* weight of p0 */
  float ev = ax * cy - ay * cx; /* weight of p1 */
  float ew = bx * ay - by * ax; /* weight of p2 */
  if ((eu < 0.0f || ev < 0.0f || ew < 0.0f) && (eu > 0.0f || ev > 0.0f || ew > 0.0f)) return 0;
  float det = eu + ev + ew;
  if (det == 0.0f) return 0;
  float tz = eu * (r->sz * az) + ev * (r->sz * bz) + ew * (r->sz * cz);
  float inv_det = 1.0f / det;
  float t = tz * inv_det;
  if (!(t > tmin && (t < tmax || (tie && t == tmax)))) return 0; /* also rejects NaN */
  *t_out = t;
  *u_out = ev * inv_det;
  *v_out = ew * inv_det;
  return 1;
}

/* Returns 1 and writes t, u, v when the ray hits the triangle at tmin < t < tmax. */
TS_FN int triangle_intersect(const TriangleRay* r, float3 p0, float3 p1, float3 p2, float tmin, float tmax,
                             float* t_out, float* u_out, float* v_out) {
  return triangle_intersect_tie(r, p0, p1, p2, tmin, tmax, 0, t_out, u_out, v_out);
}

#endif
