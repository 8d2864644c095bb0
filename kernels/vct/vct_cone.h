/* Cone tracing through the voxel mip levels (papers/001 §4.6).
 *
 * Diffuse cones (ambient occlusion and one diffuse bounce): six cones of 60 degrees, one along the
 * normal and five at 60 degrees from it. For a 60-degree cone the thesis's cone ratio is 1: sampling
 * at distance d = 2^i voxels with a sphere of diameter 2^i voxels reads mip level i exactly, so each
 * step is one trilinear lookup (8 voxels) instead of a quadrilinear one (16), and the steps double.
 * Isotropic voxels carry no orientation, so the surface a cone starts from shows up in the wider samples
 * of the side cones (their edge runs along the tangent plane): with a side lift of h, sample i of a side
 * cone moves h * d_i further along the normal, so a flat open surface no longer occludes itself.
 * Weights are cosine x solid angle, normalized: 2/7 for the centre cone and 1/7 for each side cone,
 * so uniform radiance L from every direction gives exactly L (= irradiance / pi).
 *
 * General cone (soft shadows, Eq. 4.6 - 4.8): sample spheres of radius r = d sin(theta / 2), tangent
 * to each other (r' = (r + d) s / (1 - s), d' = d + r + r'), at the fractional level log2(2r / voxel),
 * quadrilinear; radii below half a voxel are raised to it, so a thin cone steps a voxel at a time
 * instead of crawling near its apex. The trace stops where a sample sphere would reach the light.
 * Through empty space the cone keeps its step sequence but skips the samples: after a sample that read
 * nothing, an empty voxel 8 - 16 times coarser than its taps is looked up, and every later sample whose
 * taps stay inside it would read exactly zero, so the result is the same bit for bit.
 *
 * Occlusion is composited front to back: A += (1 - A) alpha, radiance C += (1 - A) alpha L. */
#ifndef TESSERA_KERNELS_VCT_VCT_CONE_H
#define TESSERA_KERNELS_VCT_VCT_CONE_H
#include "kernels/vct/vct_grid.h"

#define TS_VCT_CONE_OPAQUE 0.99f /* a cone stops here: what is left behind changes a pixel by a few 8-bit levels at most */
#define TS_VCT_DIFFUSE_CONES 6

/* Orthonormal tangents of unit n (Duff et al. 2017, "Building an orthonormal basis, revisited"). */
TS_FN void vct_basis(float3 n, float3* t, float3* b) {
  float sign = n.z >= 0.0f ? 1.0f : -1.0f;
  float a = -1.0f / (sign + n.z);
  float k = n.x * n.y * a;
  *t = make_float3(1.0f + sign * n.x * n.x * a, sign * k, -sign * n.x);
  *b = make_float3(k, sign + n.y * n.y * a, -n.y);
}

/* Direction of diffuse cone k (0: the normal; 1..5: 60 degrees from it, 72 degrees apart) and its weight. */
TS_FN float3 vct_diffuse_cone_dir(float3 n, float3 t, float3 b, int k, float* weight) {
  /* cos / sin of 0, 72, 144, 216, 288 degrees, without a private array */
  float cs = k == 1 ? 1.0f : (k == 2 || k == 5 ? 0.30901699f : -0.80901699f);
  float sn = k == 1 ? 0.0f : (k == 2 ? 0.95105652f : (k == 3 ? 0.58778525f : (k == 4 ? -0.58778525f : -0.95105652f)));
  if (k == 0) {
    *weight = 2.0f / 7.0f;
    return n;
  }
  *weight = 1.0f / 7.0f;
  return v3_normalize(v3_add(v3_scale(n, 0.5f), v3_scale(v3_add(v3_scale(t, cs), v3_scale(b, sn)), 0.86602540f)));
}

/* One 60-degree cone from o along unit dir. *occlusion_ao: occlusion gathered within ao_distance;
 * *radiance and *occlusion: premultiplied radiance and occlusion gathered within max_distance (set
 * max_distance <= ao_distance for AO only). */
TS_FN void vct_diffuse_cone_lifted(const VctGrid* g, float3 o, float3 dir, float3 lift, float ao_distance, float max_distance,
                                   float* occlusion_ao, float3* radiance, float* occlusion) {
  float a = 0.0f, ao = -1.0f;
  float3 c = make_float3(0.0f, 0.0f, 0.0f);
  uint level;
  for (level = 0u; level < g->p.level_count; ++level) {
    float d = g->p.voxel_size * vct_exp2i((int)level), k;
    float3 p;
    float4 s;
    if (d > max_distance) break;
    if (ao < 0.0f && 1.5f * d > ao_distance) ao = a; /* the sample sphere (radius d / 2) would reach past it */
    p = v3_madd(v3_madd(o, dir, d), lift, d);
    if (!vct_inside(g, p, 0.5f * d)) break;
    s = vct_sample_level(g, level, vct_level_coords(g, level, p));
    k = 1.0f - a;
    c = v3_add(c, v3_scale(make_float3(s.x, s.y, s.z), k));
    a += k * ts_fmin(s.w, 1.0f);
    if (a >= TS_VCT_CONE_OPAQUE) break;
  }
  *occlusion_ao = ao < 0.0f ? a : ao;
  *radiance = c;
  *occlusion = a;
}

TS_FN void vct_diffuse_cone(const VctGrid* g, float3 o, float3 dir, float ao_distance, float max_distance,
                            float* occlusion_ao, float3* radiance, float* occlusion) {
  vct_diffuse_cone_lifted(g, o, dir, make_float3(0.0f, 0.0f, 0.0f), ao_distance, max_distance, occlusion_ao, radiance,
                          occlusion);
}

/* The six diffuse cones around unit n from o: ambient occlusion (1 = open) and indirect radiance
 * (irradiance / pi of the first bounce). With `normalize` (the thesis's rule, §4.6: "the color is determined
 * by the average of the lit sampled voxels", the accumulation only decides where a cone stops) each cone's
 * radiance is the occupancy-weighted mean radiance of what it passed, C / A; without, the plain
 * front-to-back composite C, which averaged (isotropic) mip levels make too dark far from the surface. */
TS_FN void vct_diffuse_cones_lifted(const VctGrid* g, float3 o, float3 n, float ao_distance, float max_distance,
                                    uint normalize, float side_lift, float* ao, float3* indirect) {
  float3 t, b, sum = make_float3(0.0f, 0.0f, 0.0f);
  float occ = 0.0f, occ_full = 0.0f;
  int k;
  vct_basis(n, &t, &b);
  for (k = 0; k < TS_VCT_DIFFUSE_CONES; ++k) {
    float w, o_ao, a_full;
    float3 r;
    float3 dir = vct_diffuse_cone_dir(n, t, b, k, &w);
    vct_diffuse_cone_lifted(g, o, dir, v3_scale(n, k == 0 ? 0.0f : side_lift), ao_distance, max_distance, &o_ao, &r,
                            &a_full);
    occ += w * o_ao;
    occ_full += w * a_full;
    sum = v3_madd(sum, r, w);
  }
  *ao = 1.0f - occ;
  *indirect = normalize ? (occ_full > 1e-4f ? v3_scale(sum, 1.0f / occ_full) : make_float3(0.0f, 0.0f, 0.0f)) : sum;
}

TS_FN void vct_diffuse_cones(const VctGrid* g, float3 o, float3 n, float ao_distance, float max_distance, uint normalize,
                             float* ao, float3* indirect) {
  vct_diffuse_cones_lifted(g, o, n, ao_distance, max_distance, normalize, 0.0f, ao, indirect);
}

/* General cone of half-angle sine `sin_half` from o along unit dir, up to max_distance: the share of
 * light that gets through (1 = unoccluded). The first sample lies (1 + jitter) voxels out, jitter in
 * [0, 1) differing from pixel to pixel: with one fixed step sequence, the samples' positions against a
 * thin occluder's voxels repeat with the receiver's distance from it, and shadows show concentric
 * bands (the steps grow geometrically, so shifting the first one shifts every later one by up to a
 * step); a jittered start trades the bands for fine noise that anti-aliasing samples average away. */
TS_FN float vct_shadow_cone(const VctGrid* g, float3 o, float3 dir, float sin_half, float max_distance, float jitter) {
  float v = g->p.voxel_size, rmin = 0.5f * v, ratio = sin_half / (1.0f - sin_half);
  float d = v * (1.0f + jitter), r = ts_fmax(d * sin_half, rmin), a = 0.0f;
  float3 empty_lo = make_float3(0.0f, 0.0f, 0.0f), empty_hi = make_float3(-1.0f, -1.0f, -1.0f); /* none yet */
  uint iter, top = g->p.level_count - 1u;
  for (iter = 0u; iter < 4096u; ++iter) {
    float3 p;
    float s, rn, level, reach;
    uint taps; /* the coarsest level the sample reads */
    if (d + r > max_distance) break;
    p = v3_madd(o, dir, d);
    if (!vct_inside(g, p, r)) break;
    level = vct_log2_approx(2.0f * r / v);
    taps = level <= 0.0f ? 0u : (level >= (float)top ? top : (uint)level + 1u);
    /* taps lie within 1.5 of their voxels of p; 2 leaves room for rounding */
    reach = 2.0f * v * vct_exp2i((int)taps);
    if (!vct_cube_in_box(p, reach, empty_lo, empty_hi)) {
      s = vct_sample_occupancy(g, p, level);
      a += (1.0f - a) * ts_fmin(s, 1.0f);
      if (a >= TS_VCT_CONE_OPAQUE) break;
      if (s == 0.0f) vct_empty_box(g, p, taps + 3u, taps + 4u, &empty_lo, &empty_hi); /* else keeps the last box */
    }
    rn = ts_fmax((d + r) * ratio, rmin);
    d += r + rn;
    r = rn;
  }
  return 1.0f - a;
}

#endif
