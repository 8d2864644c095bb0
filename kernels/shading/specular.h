/* Perfect specular directions and the dielectric Fresnel term, for mirror and glass materials. */
#ifndef TESSERA_KERNELS_SHADING_SPECULAR_H
#define TESSERA_KERNELS_SHADING_SPECULAR_H
#include "kernels/base/vec.h"

/* Fraction of light a dielectric interface reflects (unpolarized, exact Fresnel). */
TS_FN float fresnel_dielectric(float cos_i, float eta_i, float eta_t) {
  float sin_t = eta_i / eta_t * ts_sqrt(ts_fmax(0.0f, 1.0f - cos_i * cos_i));
  float cos_t, rs, rp;
  if (sin_t >= 1.0f) return 1.0f;
  cos_t = ts_sqrt(ts_fmax(0.0f, 1.0f - sin_t * sin_t));
  rs = (eta_i * cos_i - eta_t * cos_t) / (eta_i * cos_i + eta_t * cos_t);
  rp = (eta_t * cos_i - eta_i * cos_t) / (eta_t * cos_i + eta_i * cos_t);
  return 0.5f * (rs * rs + rp * rp);
}

TS_FN float3 reflect_dir(float3 d, float3 n) { return v3_sub(d, v3_scale(n, 2.0f * v3_dot(d, n))); }

/* Unit refraction of unit d through a surface with unit normal n facing d's origin (cos_i = -d.n),
 * eta = eta_i / eta_t; callers handle total internal reflection (Fresnel 1) before. */
TS_FN float3 refract_dir(float3 d, float3 n, float cos_i, float eta) {
  float k = 1.0f - eta * eta * (1.0f - cos_i * cos_i);
  return v3_normalize(v3_add(v3_scale(d, eta), v3_scale(n, eta * cos_i - ts_sqrt(ts_fmax(k, 0.0f)))));
}

#endif
