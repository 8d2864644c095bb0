/* The watertight test of kernels/geom/triangle.h on TS_SIMD_LANES triangles at once, for CPU
 * devices: lane by lane the very same arithmetic in the same order, so every lane's t, u and v are
 * bit-identical to what triangle_intersect computes for that triangle alone. */
#ifndef TESSERA_KERNELS_GEOM_TRIANGLE_BATCH_H
#define TESSERA_KERNELS_GEOM_TRIANGLE_BATCH_H
#include "kernels/base/simd.h"
#include "kernels/geom/triangle.h"

/* Vertex positions of TS_SIMD_LANES triangles: p[vertex][axis][lane]. */
typedef struct TriangleBatch {
  float p[3][3][TS_SIMD_LANES];
} TriangleBatch;

/* Per lane: -1 where the ray hits that triangle at tmin < t <= tmax, writing t, u and v there (the
 * caller keeps t == tmax only where its rule for equally near hits says so). */
TS_FN ts_intv triangle_intersect_simd(const TriangleRay* r, const TriangleBatch* b, float tmin, float tmax, ts_floatv* t_out,
                                  ts_floatv* u_out, ts_floatv* v_out) {
  const ts_floatv ox = ts_simd_splat(v3_get(r->org, r->kx)), oy = ts_simd_splat(v3_get(r->org, r->ky));
  const ts_floatv oz = ts_simd_splat(v3_get(r->org, r->kz));
  const ts_floatv sx = ts_simd_splat(r->sx), sy = ts_simd_splat(r->sy), sz = ts_simd_splat(r->sz);
  const ts_floatv zero = ts_simd_splat(0.0f);
  ts_floatv az = ts_simd_load(b->p[0][r->kz]) - oz, bz = ts_simd_load(b->p[1][r->kz]) - oz, cz = ts_simd_load(b->p[2][r->kz]) - oz;
  ts_floatv ax = (ts_simd_load(b->p[0][r->kx]) - ox) - sx * az, ay = (ts_simd_load(b->p[0][r->ky]) - oy) - sy * az;
  ts_floatv bx = (ts_simd_load(b->p[1][r->kx]) - ox) - sx * bz, by = (ts_simd_load(b->p[1][r->ky]) - oy) - sy * bz;
  ts_floatv cx = (ts_simd_load(b->p[2][r->kx]) - ox) - sx * cz, cy = (ts_simd_load(b->p[2][r->ky]) - oy) - sy * cz;
  ts_floatv eu = cx * by - cy * bx;
  ts_floatv ev = ax * cy - ay * cx;
  ts_floatv ew = bx * ay - by * ax;
  ts_intv outside = ((eu < zero) | (ev < zero) | (ew < zero)) & ((eu > zero) | (ev > zero) | (ew > zero));
  ts_floatv det = eu + ev + ew;
  ts_floatv tz = eu * (sz * az) + ev * (sz * bz) + ew * (sz * cz);
  ts_floatv inv_det = ts_simd_splat(1.0f) / det;
  ts_floatv t = tz * inv_det;
  *t_out = t;
  *u_out = ev * inv_det;
  *v_out = ew * inv_det;
  return ~outside & (det != zero) & (t > ts_simd_splat(tmin)) & (t <= ts_simd_splat(tmax));
}

#endif
