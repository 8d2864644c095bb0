/* Pinhole camera rays from a 6-DOF pose. The host turns position + unit quaternion (and, for
 * stereo, the eye's offset along the head's right vector) into this basis; the frustum is given as
 * tangents at unit distance, so asymmetric (off-axis) projections of VR headsets work directly.
 * Pixel (0, 0) is the top-left corner of the full image. */
#ifndef TESSERA_KERNELS_RENDER_CAMERA_H
#define TESSERA_KERNELS_RENDER_CAMERA_H
#include "kernels/base/vec.h"

typedef struct CameraParams {
  float pos_x, pos_y, pos_z;       /* eye position */
  float right_x, right_y, right_z; /* camera +x in world space */
  float up_x, up_y, up_z;          /* camera +y */
  float fwd_x, fwd_y, fwd_z;       /* camera -z: the viewing direction */
  float left, right, bottom, top;  /* frustum edges as tangents at distance 1 */
  uint width, height;              /* full image size in pixels */
} CameraParams;

TS_FN float3 camera_origin(const CameraParams* c) { return make_float3(c->pos_x, c->pos_y, c->pos_z); }

/* Unit direction through image position (x, y) in pixels (x + 0.5 is a pixel centre). */
TS_FN float3 camera_direction(const CameraParams* c, float x, float y) {
  float sx = c->left + (c->right - c->left) * (x / (float)c->width);
  float sy = c->top - (c->top - c->bottom) * (y / (float)c->height);
  float3 d = make_float3(c->fwd_x, c->fwd_y, c->fwd_z);
  d = v3_madd(d, make_float3(c->right_x, c->right_y, c->right_z), sx);
  d = v3_madd(d, make_float3(c->up_x, c->up_y, c->up_z), sy);
  return v3_normalize(d);
}

#endif
