/* Materials and their diffuse textures' descriptors as the kernels see them. Triangles are grouped by material in
 * the packed scene; a hit finds its material by binary search over the (first triangle, material)
 * runs, which costs nothing per triangle in memory. */
#ifndef TESSERA_KERNELS_SHADING_MATERIAL_H
#define TESSERA_KERNELS_SHADING_MATERIAL_H
#include "kernels/shading/color.h"

#define TS_MATERIAL_DIFFUSE 0u
#define TS_MATERIAL_MIRROR 1u
#define TS_MATERIAL_GLASS 2u
#define TS_MATERIAL_EMISSIVE 3u

#define TS_TEXTURE_HAS_ALPHA 1u

/* 48 bytes, scalars only, so host and device agree on the layout. */
typedef struct MaterialGpu {
  float diffuse_r, diffuse_g, diffuse_b;
  float emission_r, emission_g, emission_b;
  float ior;
  int texture; /* -1: none */
  uint type;
  float texcoord_scale; /* value of one step of quantized texcoords: 2^-(16 - integer bits) */
  uint pad1, pad2;
} MaterialGpu;

/* 32 bytes. Mip level k (k < levels) is max(1, width >> k) x max(1, height >> k) texels, right after
 * level k - 1 (kernels/shading/texture_filter.h). */
typedef struct TextureGpu {
  uint texel_offset; /* first texel of level 0 in the texel buffer */
  uint width, height; /* of level 0 */
  uint flags;
  uint levels;        /* 1: level 0 alone */
  uint pad0, pad1, pad2;
} TextureGpu;

TS_FN uint material_of_triangle(TS_GLOBAL const uint* runs, uint run_count, uint tri) {
  uint lo = 0u, hi = run_count;
  while (hi - lo > 1u) {
    uint mid = (lo + hi) >> 1;
    if (runs[2u * mid] <= tri) lo = mid;
    else hi = mid;
  }
  return runs[2u * lo + 1u];
}

#endif
