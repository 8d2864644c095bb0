#pragma once
// Mip chains of sRGB textures, as the packer stores them in the TEXELS section: level 0 (the
// texture) and then each half-size level back to back, down to 1 x 1. Level k is
// max(1, width >> k) x max(1, height >> k) texels, so a full chain of a square texture costs 1/3
// more texels; the packer stops where the chain would cost more (kernels/shading/texture_filter.h
// finds the levels by the same rule).
#include <cstdint>
#include <vector>

#include "common/scene/triangle_mesh.h"

namespace tessera {

// Levels of a full chain: 1 + floor(log2(max(width, height))).
uint32_t full_mip_levels(uint32_t width, uint32_t height);

// Levels the packer stores: the full chain, cut before a level that would take the chain past 4/3 of
// level 0's texels. Square and near-square textures keep every level; only long, thin ones (whose
// 1-texel-high tail levels would cost up to as much again) lose their smallest levels.
uint32_t stored_mip_levels(uint32_t width, uint32_t height);

// Texels of the first `levels` levels together (0 when width or height is 0).
uint64_t mip_chain_texels(uint32_t width, uint32_t height, uint32_t levels);

// The next level: each texel a 2 x 2 box (odd last rows and columns fold into their neighbours'
// boxes, 2 x 3 or 3 x 3) averaged in linear light. Where the texture is a cut-out (alpha mask),
// colours are weighted by alpha so that transparent texels do not bleed into the edges.
TextureImage half_size(const TextureImage& texture);

// Level 0 and every smaller level, RGBA8 back to back (stored_mip_levels levels). The alpha of a
// cut-out texture is rescaled per level so that the share of texels passing the 0.5 test stays that
// of level 0: foliage and chains keep their coverage in the distance instead of thinning out.
std::vector<uint8_t> build_mip_chain(const TextureImage& texture);

}  // namespace tessera
