/* Texture lookups: bilinear within one mip level, trilinear between two (the level from a ray
 * cone's footprint, kernels/render/ray_cone.h). Texels are sRGB RGBA8 and are filtered in linear
 * light, as the packer built the levels (common/scene/mip_chain.h). */
#ifndef TESSERA_KERNELS_SHADING_TEXTURE_FILTER_H
#define TESSERA_KERNELS_SHADING_TEXTURE_FILTER_H
#include "kernels/shading/material.h"

/* One mip level: where its texels start and its size. */
typedef struct TextureLevel {
  uint offset, width, height;
} TextureLevel;

TS_FN TextureLevel texture_level(const TextureGpu* tex, uint k) {
  TextureLevel l;
  uint i;
  l.offset = tex->texel_offset;
  l.width = tex->width;
  l.height = tex->height;
  for (i = 0u; i < k; ++i) {
    l.offset += l.width * l.height;
    l.width = l.width > 1u ? l.width >> 1 : 1u;
    l.height = l.height > 1u ? l.height >> 1 : 1u;
  }
  return l;
}

TS_FN float4 texel_linear(const ColorTables* ct, TS_GLOBAL const uint* texels, const TextureLevel* l, int x, int y) {
  uint p;
  x %= (int)l->width;
  y %= (int)l->height;
  if (x < 0) x += (int)l->width;
  if (y < 0) y += (int)l->height;
  p = texels[l->offset + (uint)y * l->width + (uint)x];
  return make_float4(ct->srgb_to_linear[p & 255u], ct->srgb_to_linear[(p >> 8) & 255u],
                     ct->srgb_to_linear[(p >> 16) & 255u], (float)(p >> 24) * (1.0f / 255.0f));
}

/* Bilinear lookup in one level with repeat wrapping; v = 0 is the bottom row (OBJ convention). */
TS_FN float4 texture_sample_level(const ColorTables* ct, TS_GLOBAL const uint* texels, const TextureLevel* l, float u,
                                  float v) {
  float x = u * (float)l->width - 0.5f;
  float y = (1.0f - v) * (float)l->height - 0.5f;
  float fx0 = ts_floor(x), fy0 = ts_floor(y);
  float ax = x - fx0, ay = y - fy0;
  int x0 = (int)fx0, y0 = (int)fy0;
  float4 a = texel_linear(ct, texels, l, x0, y0), b = texel_linear(ct, texels, l, x0 + 1, y0);
  float4 c = texel_linear(ct, texels, l, x0, y0 + 1), d = texel_linear(ct, texels, l, x0 + 1, y0 + 1);
  float w00 = (1.0f - ax) * (1.0f - ay), w10 = ax * (1.0f - ay), w01 = (1.0f - ax) * ay, w11 = ax * ay;
  return make_float4(a.x * w00 + b.x * w10 + c.x * w01 + d.x * w11, a.y * w00 + b.y * w10 + c.y * w01 + d.y * w11,
                     a.z * w00 + b.z * w10 + c.z * w01 + d.z * w11, a.w * w00 + b.w * w10 + c.w * w01 + d.w * w11);
}

/* Level of detail of a footprint, after Akenine-Moeller et al. 2019 (Eq. for ray cones):
 *   lambda = Delta + log2(footprint),  Delta = 0.5 log2(w h t_a / p_a)
 * with t_a / p_a the triangle's texture-coordinate area over its world area (uv_per_area) and
 * `footprint` the world-space side of the (square) area one lookup stands for. Written as one log2
 * of the texel area the footprint covers; 0 (level 0) where it covers at most one texel. */
TS_FN float texture_lod(const TextureGpu* tex, float uv_per_area, float footprint) {
  float texels = (float)tex->width * (float)tex->height * uv_per_area * footprint * footprint;
  return texels > 1.0f ? 0.5f * ts_log2(texels) : 0.0f;
}

/* Trilinear lookup: bilinear in the two levels around `lod`, blended (levels beyond the last clamp
 * to it). lod 0 is exactly the bilinear lookup in level 0. */
TS_FN float4 texture_sample(const ColorTables* ct, TS_GLOBAL const uint* texels, const TextureGpu* tex, float u, float v,
                            float lod) {
  float last = (float)(tex->levels - 1u), f, lo;
  TextureLevel l;
  float4 a, b;
  lod = ts_fmin(ts_fmax(lod, 0.0f), last);
  lo = ts_floor(lod);
  f = lod - lo;
  l = texture_level(tex, (uint)lo);
  a = texture_sample_level(ct, texels, &l, u, v);
  if (f <= 0.0f) return a;
  l = texture_level(tex, (uint)lo + 1u);
  b = texture_sample_level(ct, texels, &l, u, v);
  return make_float4(a.x + (b.x - a.x) * f, a.y + (b.y - a.y) * f, a.z + (b.z - a.z) * f, a.w + (b.w - a.w) * f);
}

#endif
