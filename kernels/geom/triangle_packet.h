/* The watertight test of kernels/geom/triangle.h for one triangle against TS_SIMD_LANES rays at
 * once (a ray packet on a CPU). Each lane keeps its own ray's shear and axis order, picked per lane,
 * so a lane's t, u and v are bit-identical to triangle_intersect for that ray alone. */
#ifndef TESSERA_KERNELS_GEOM_TRIANGLE_PACKET_H
#define TESSERA_KERNELS_GEOM_TRIANGLE_PACKET_H
#include "kernels/base/simd.h"
#include "kernels/geom/triangle.h"

/* Per-lane constants of TS_SIMD_LANES TriangleRays. */
typedef struct TrianglePacket {
  ts_floatv ox, oy, oz;
  ts_intv kx0, kx1, ky0, ky1, kz0, kz1; /* lane masks: axis k? is 0, is 1 (else 2) */
  ts_floatv sx, sy, sz;
} TrianglePacket;

TS_FN TrianglePacket triangle_packet_setup(const TriangleRay* rays) {
  TrianglePacket p;
  float ox[TS_SIMD_LANES], oy[TS_SIMD_LANES], oz[TS_SIMD_LANES], sx[TS_SIMD_LANES], sy[TS_SIMD_LANES], sz[TS_SIMD_LANES];
  int kx0[TS_SIMD_LANES], kx1[TS_SIMD_LANES], ky0[TS_SIMD_LANES], ky1[TS_SIMD_LANES], kz0[TS_SIMD_LANES], kz1[TS_SIMD_LANES];
  uint i;
  for (i = 0u; i < TS_SIMD_LANES; ++i) {
    ox[i] = rays[i].org.x;
    oy[i] = rays[i].org.y;
    oz[i] = rays[i].org.z;
    sx[i] = rays[i].sx;
    sy[i] = rays[i].sy;
    sz[i] = rays[i].sz;
    kx0[i] = rays[i].kx == 0u ? -1 : 0;
    kx1[i] = rays[i].kx == 1u ? -1 : 0;
    ky0[i] = rays[i].ky == 0u ? -1 : 0;
    ky1[i] = rays[i].ky == 1u ? -1 : 0;
    kz0[i] = rays[i].kz == 0u ? -1 : 0;
    kz1[i] = rays[i].kz == 1u ? -1 : 0;
  }
  p.ox = ts_simd_load(ox);
  p.oy = ts_simd_load(oy);
  p.oz = ts_simd_load(oz);
  p.sx = ts_simd_load(sx);
  p.sy = ts_simd_load(sy);
  p.sz = ts_simd_load(sz);
  p.kx0 = ts_simd_load_int(kx0);
  p.kx1 = ts_simd_load_int(kx1);
  p.ky0 = ts_simd_load_int(ky0);
  p.ky1 = ts_simd_load_int(ky1);
  p.kz0 = ts_simd_load_int(kz0);
  p.kz1 = ts_simd_load_int(kz1);
  return p;
}

/* Component k of (x, y, z) per lane, k given by the lane masks is0 / is1. */
TS_FN ts_floatv triangle_packet_pick(ts_floatv x, ts_floatv y, ts_floatv z, ts_intv is0, ts_intv is1) {
  return ts_simd_select(ts_simd_select(z, y, is1), x, is0);
}

/* Per lane: -1 where that lane's ray hits the triangle at tmin < t < tmax (or t == tmax where tie is
 * set), writing t, u and v. */
TS_FN ts_intv triangle_intersect_packet(const TrianglePacket* r, float3 p0, float3 p1, float3 p2, ts_floatv tmin,
                                        ts_floatv tmax, ts_intv tie, ts_floatv* t_out, ts_floatv* u_out, ts_floatv* v_out) {
  const ts_floatv zero = ts_simd_splat(0.0f);
  ts_floatv a0 = ts_simd_splat(p0.x) - r->ox, a1 = ts_simd_splat(p0.y) - r->oy, a2 = ts_simd_splat(p0.z) - r->oz;
  ts_floatv b0 = ts_simd_splat(p1.x) - r->ox, b1 = ts_simd_splat(p1.y) - r->oy, b2 = ts_simd_splat(p1.z) - r->oz;
  ts_floatv c0 = ts_simd_splat(p2.x) - r->ox, c1 = ts_simd_splat(p2.y) - r->oy, c2 = ts_simd_splat(p2.z) - r->oz;
  ts_floatv az = triangle_packet_pick(a0, a1, a2, r->kz0, r->kz1);
  ts_floatv bz = triangle_packet_pick(b0, b1, b2, r->kz0, r->kz1);
  ts_floatv cz = triangle_packet_pick(c0, c1, c2, r->kz0, r->kz1);
  ts_floatv ax = triangle_packet_pick(a0, a1, a2, r->kx0, r->kx1) - r->sx * az;
  ts_floatv ay = triangle_packet_pick(a0, a1, a2, r->ky0, r->ky1) - r->sy * az;
  ts_floatv bx = triangle_packet_pick(b0, b1, b2, r->kx0, r->kx1) - r->sx * bz;
  ts_floatv by = triangle_packet_pick(b0, b1, b2, r->ky0, r->ky1) - r->sy * bz;
  ts_floatv cx = triangle_packet_pick(c0, c1, c2, r->kx0, r->kx1) - r->sx * cz;
  ts_floatv cy = triangle_packet_pick(c0, c1, c2, r->ky0, r->ky1) - r->sy * cz;
  ts_floatv eu = cx * by - cy * bx;
  ts_floatv ev = ax * cy - ay * cx;
  ts_floatv ew = bx * ay - by * ax;
  ts_intv outside = ((eu < zero) | (ev < zero) | (ew < zero)) & ((eu > zero) | (ev > zero) | (ew > zero));
  ts_floatv det = eu + ev + ew;
  ts_floatv tz = eu * (r->sz * az) + ev * (r->sz * bz) + ew * (r->sz * cz);
  ts_floatv inv_det = ts_simd_splat(1.0f) / det;
  ts_floatv t = tz * inv_det;
  *t_out = t;
  *u_out = ev * inv_det;
  *v_out = ew * inv_det;
  return ~outside & (det != zero) & (t > tmin) & ((t < tmax) | ((t == tmax) & tie));
}

#endif
