/* Ray cones (Akenine-Moeller et al., "Texture Level of Detail Strategies for Real-Time Ray Tracing",
 * Ray Tracing Gems 2019, and "Improved Shader and Texture Level of Detail Using Ray Cones", JCGT 2021):
 * each ray carries the width of its pixel's footprint cone at its origin and the cone's spread angle.
 * The width grows linearly with the distance travelled (W = W0 + gamma t); a curved mirror or lens
 * widens or narrows the spread at each hit. The footprint picks the texture level
 * (kernels/shading/texture_filter.h). */
#ifndef TESSERA_KERNELS_RENDER_RAY_CONE_H
#define TESSERA_KERNELS_RENDER_RAY_CONE_H
#include "kernels/render/camera.h"

typedef struct RayCone {
  float width;  /* at the ray's origin, world units (negative once a converging cone passed its apex) */
  float spread; /* angle, radians: the width grows by this much per unit of distance */
} RayCone;

/* A primary ray: a pinhole (width 0) and the angle one pixel subtends, atan(2 tan(fov / 2) / H),
 * taken as its tangent (they agree to 1e-7 for any real image height). Where filtering is off
 * (`filter` 0) the cone has no spread, and textures are read at level 0. */
TS_FN RayCone ray_cone_primary(const CameraParams* cam, uint filter) {
  RayCone c;
  c.width = 0.0f;
  c.spread = filter ? (cam->top - cam->bottom) / (float)cam->height : 0.0f;
  return c;
}

/* The cone's width after `t` units of distance. */
TS_FN float ray_cone_width_at(RayCone c, float t) { return c.width + c.spread * t; }

/* The cone of a ray continuing from a hit `t` away (a cut-out, where the ray passes on unchanged). */
TS_FN RayCone ray_cone_pass(RayCone c, float t) {
  RayCone out;
  out.width = ray_cone_width_at(c, t);
  out.spread = c.spread;
  return out;
}

/* The reflected cone at a hit `t` away on a surface of curvature k (kernels/shading/surface.h:
 * positive where convex): a normal turning by k W across the footprint turns the reflection by
 * twice that, beta = 2 k W (2021, isotropic form). */
TS_FN RayCone ray_cone_reflect(RayCone c, float t, float curvature) {
  RayCone out;
  out.width = ray_cone_width_at(c, t);
  out.spread = c.spread + 2.0f * curvature * ts_fabs(out.width);
  return out;
}

/* The refracted cone, eta = eta_i / eta_t: by Snell's law for small angles the spread scales by eta
 * (across the plane of incidence), and the curvature bends it by (eta - 1) k W, a converging lens
 * where a convex surface is entered (eta < 1) or left (then seen from inside, k < 0 and eta > 1). */
TS_FN RayCone ray_cone_refract(RayCone c, float t, float curvature, float eta) {
  RayCone out;
  out.width = ray_cone_width_at(c, t);
  out.spread = c.spread * eta + (eta - 1.0f) * curvature * ts_fabs(out.width);
  return out;
}

#endif
