#pragma once
// Depth and coverage beside the colour (FrameRequest.aux, tessera-render --depth-out and
// --background transparent): what a request asks for resolved against the scene's shadow catcher,
// and the per-pixel words of the aux pass (kernels/integrators/primary_aux.h) turned into the
// outputs: the 16-bit inverse depth of TileResult.depth and the transparent, premultiplied colour.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/integrators/primary_aux.h"
#include "tpk.pb.h"

namespace tessera {

inline constexpr float kDefaultShadowOpacity = 0.6f;

struct AuxRequest {
  bool depth = false;
  float depth_near = 0.0f;  // scene units; > 0 and finite when depth is asked for
  bool transparent = false;
  std::optional<float> catcher_height;  // unset: the scene's shadow catcher, if it has one
  float shadow_opacity = 0.0f;          // 0: the scene's, else kDefaultShadowOpacity

  bool any() const { return depth || transparent; }
};

// The kernels' settings for `request` on a scene with `manifest`. The shadow catcher is there only
// for a transparent background. Throws Error (naming the field) on a depth_near that is not finite
// and positive, a height that is not finite or an opacity outside [0, 1].
AuxSettings aux_settings(const AuxRequest& request, const tpk::Manifest& manifest);

// A pass word's parts.
inline uint16_t aux_inverse_depth_of(uint32_t word) { return uint16_t(word & 0xFFFFu); }
inline uint8_t aux_alpha_of(uint32_t word) { return uint8_t((word >> 16) & 0xFFu); }

// The transparent background's pixel (premultiplied RGBA8): the opaque colour where the primary ray
// hits the scene, else black with the pass's coverage (0, or the shadow catcher's shadow).
inline uint32_t transparent_pixel(uint32_t opaque_rgba, uint32_t aux_word) {
  const uint32_t alpha = aux_alpha_of(aux_word);
  return alpha == 255u ? opaque_rgba : alpha << 24;
}
// Every pixel of `rgba` made transparent_pixel by the pass words `aux` beside it (same size).
void apply_transparency(std::span<uint32_t> rgba, std::span<const uint32_t> aux);

// TileResult.depth: the inverse depths of the pass words, little-endian uint16 rows, as one zstd
// frame (zstd_level <= 0: level 1).
std::vector<uint8_t> encode_inverse_depth(std::span<const uint32_t> aux, int zstd_level);
// The inverse depths of `pixels` pixels from encode_inverse_depth's bytes; throws Error when the
// data does not decode to exactly that many.
std::vector<uint16_t> decode_inverse_depth(std::span<const uint8_t> encoded, size_t pixels);

// z of an inverse depth: depth_near * 65535 / q, infinity for q = 0.
float depth_of_inverse(uint16_t q, float depth_near);

}  // namespace tessera
