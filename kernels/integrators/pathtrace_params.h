/* Parameters and per-pixel output of the `pathtrace` mode (Kim & Sung 2021, papers/004_*): stereo
 * path tracing of both eyes of a tile, reprojection of first-hit radiance into the other eye
 * (Eq. 5, 6), gaze-based stopping after depth T_d (Eq. 7). Scalars only, so host and device agree
 * on the layout. */
#ifndef TESSERA_KERNELS_INTEGRATORS_PATHTRACE_PARAMS_H
#define TESSERA_KERNELS_INTEGRATORS_PATHTRACE_PARAMS_H
#include "kernels/base/compat.h"
#include "kernels/scene/scene_view.h" /* TS_SCENE_INSTANCE_FIELDS */

/* PathTraceParams.features */
#define TS_PT_REPROJECT 1u        /* add first-hit radiance to the other eye's pixel (Algorithm 3) */
#define TS_PT_GAZE_STOP 2u        /* stop paths after depth T_d with P_d of Eq. 7 */
#define TS_PT_STOP_COMPENSATE 4u  /* divide surviving paths by 1 - P_d (unbiased; the paper does not) */
#define TS_PT_REPROJECT_MIRROR 8u /* also through mirrors at the first hit (Eq. 6) */
#define TS_PT_VISIBILITY_RAY 16u  /* test the other eye's view of P_c with a shadow ray, not its primary hits */

/* indirect_clamp of interactive use (tessera-render, tessera-master) unless given; benchmarks run without */
#define TS_PT_INTERACTIVE_CLAMP 3.0f

typedef struct PathTraceParams {
  uint features;
  uint first_sample;    /* sample index of this launch's first sample (counter-based RNG) */
  uint samples;         /* samples per pixel and eye in this launch */
  uint eye_count;       /* 1: mono (the left camera only), 2: stereo */
  uint depth_threshold; /* T_d: the gaze rule applies at vertices deeper than this (0 = primary hit) */
  uint rr_depth;        /* Russian roulette at vertices of this depth and deeper */
  uint tile_x0, tile_y0, tile_w, tile_h; /* the tile: the same rectangle in both eyes */
  float p_max;          /* P_max of Eq. 7 */
  float gaze_x, gaze_y; /* the gaze point in pixels of the eye image */
  float inv_d_max;      /* 1 / d_max: largest distance from the gaze point to an image corner, in pixels */
  /* > 0: each contribution a path brings after its first diffuse bounce is scaled down to at most
   * this radiance in its largest channel (fewer fireflies, biased: energy is lost); 0: off. */
  float indirect_clamp;
  uint pad1;
} PathTraceParams;

/* What one launch leaves for each pixel of each eye, written only by that pixel's work item.
 * Samples other pixels send here through reprojection go to a separate float4 buffer (r, g, b,
 * count), added atomically. 32 bytes. */
typedef struct PtPixelOut {
  float r, g, b;     /* sum of the pixel's own samples (linear radiance) */
  uint samples;      /* own samples */
  uint stopped;      /* own samples the gaze rule stopped early */
  uint specular;     /* own samples whose primary hit is a mirror or glass */
  uint reprojected;  /* samples this pixel sent to the other eye */
  uint segments;     /* closest-hit rays traced for this pixel (paths and reprojection) */
} PtPixelOut;

/* A sample's first opaque hit (phase 1 of a sample; cut-out texels are passed through). The other
 * eye's first hits of the same sample tell whether it sees a reprojected point. 16 bytes; 20 where
 * the scene is instanced (TS_SCENE_INSTANCE_FIELDS: the host always, OpenCL programs built for an
 * instanced scene), whose buffers the host sizes by pt_primary_bytes (worker/render/pathtrace_backend.h). */
typedef struct PtPrimary {
  uint tri;   /* TS_KD_NO_TRIANGLE (0xFFFFFFFF) when the ray left the scene */
  float u, v; /* barycentrics, see kernels/geom/triangle.h */
  float dist; /* distance from the eye */
#ifdef TS_SCENE_INSTANCE_FIELDS
  uint inst;  /* the hit's instance slot (Hit.inst) */
#endif
} PtPrimary;

#endif
