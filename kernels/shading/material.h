/* Materials and diffuse textures as the kernels see them. Triangles are grouped by material in
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

typedef struct TextureGpu {
  uint texel_offset; /* first texel in the texel buffer */
  uint width, height;
  uint flags;
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

TS_FN float4 texel_linear(const ColorTables* ct, TS_GLOBAL const uint* texels, const TextureGpu* tex, int x, int y) {
  uint p;
  x %= (int)tex->width;
  y %= (int)tex->height;
  if (x < 0) x += (int)tex->width;
  if (y < 0) y += (int)tex->height;
  p = texels[tex->texel_offset + (uint)y * tex->width + (uint)x];
  return make_float4(ct->srgb_to_linear[p & 255u], ct->srgb_to_linear[(p >> 8) & 255u],
                     ct->srgb_to_linear[(p >> 16) & 255u], (float)(p >> 24) * (1.0f / 255.0f));
}

/* Bilinear lookup with repeat wrapping; v = 0 is the bottom row (OBJ convention). */
TS_FN float4 texture_sample(const ColorTables* ct, TS_GLOBAL const uint* texels, const TextureGpu* tex, float u, float v) {
  float x = u * (float)tex->width - 0.5f;
  float y = (1.0f - v) * (float)tex->height - 0.5f;
  float fx0 = ts_floor(x), fy0 = ts_floor(y);
  float ax = x - fx0, ay = y - fy0;
  int x0 = (int)fx0, y0 = (int)fy0;
  float4 a = texel_linear(ct, texels, tex, x0, y0), b = texel_linear(ct, texels, tex, x0 + 1, y0);
  float4 c = texel_linear(ct, texels, tex, x0, y0 + 1), d = texel_linear(ct, texels, tex, x0 + 1, y0 + 1);
  float w00 = (1.0f - ax) * (1.0f - ay), w10 = ax * (1.0f - ay), w01 = (1.0f - ax) * ay, w11 = ax * ay;
  return make_float4(a.x * w00 + b.x * w10 + c.x * w01 + d.x * w11, a.y * w00 + b.y * w10 + c.y * w01 + d.y * w11,
                     a.z * w00 + b.z * w10 + c.z * w01 + d.z * w11, a.w * w00 + b.w * w10 + c.w * w01 + d.w * w11);
}

#endif
