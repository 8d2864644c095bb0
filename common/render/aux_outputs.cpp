#include "common/render/aux_outputs.h"

#include <cmath>
#include <limits>

#include "common/base/error.h"
#include "common/base/zstd_codec.h"

namespace tessera {

AuxSettings aux_settings(const AuxRequest& request, const tpk::Manifest& manifest) {
  AuxSettings s{};
  s.depth_near = 1.0f;
  if (request.depth) {
    if (!(std::isfinite(request.depth_near) && request.depth_near > 0.0f))
      throw Error("aux depth_near must be finite and positive (it is " + std::to_string(request.depth_near) + ")");
    s.depth_near = request.depth_near;
  }
  if (request.catcher_height && !std::isfinite(*request.catcher_height))
    throw Error("aux shadow_catcher_height is not finite");
  if (!(request.shadow_opacity >= 0.0f && request.shadow_opacity <= 1.0f))
    throw Error("aux shadow_opacity must lie in [0, 1] (it is " + std::to_string(request.shadow_opacity) + ")");
  if (!request.transparent) return s;
  const bool scene_catcher = manifest.has_shadow_catcher();
  if (!request.catcher_height && !scene_catcher) return s;
  s.has_catcher = 1;
  s.catcher_height = request.catcher_height ? *request.catcher_height : manifest.shadow_catcher().height();
  const float scene_opacity = scene_catcher ? manifest.shadow_catcher().opacity() : 0.0f;
  s.shadow_opacity = request.shadow_opacity > 0.0f ? request.shadow_opacity
                     : scene_opacity > 0.0f        ? scene_opacity
                                                   : kDefaultShadowOpacity;
  return s;
}

void apply_transparency(std::span<uint32_t> rgba, std::span<const uint32_t> aux) {
  if (rgba.size() != aux.size()) throw Error("transparency: colour and coverage differ in size");
  for (size_t i = 0; i < rgba.size(); ++i) rgba[i] = transparent_pixel(rgba[i], aux[i]);
}

std::vector<uint8_t> encode_inverse_depth(std::span<const uint32_t> aux, int zstd_level) {
  std::vector<uint8_t> raw(aux.size() * 2);
  for (size_t i = 0; i < aux.size(); ++i) {
    const uint16_t q = aux_inverse_depth_of(aux[i]);
    raw[2 * i] = uint8_t(q & 0xFFu);
    raw[2 * i + 1] = uint8_t(q >> 8);
  }
  return zstd_compress(raw, zstd_level > 0 ? zstd_level : 1);
}

std::vector<uint16_t> decode_inverse_depth(std::span<const uint8_t> encoded, size_t pixels) {
  const std::vector<uint8_t> raw = zstd_decompress(encoded, pixels * 2);
  std::vector<uint16_t> q(pixels);
  for (size_t i = 0; i < pixels; ++i) q[i] = uint16_t(raw[2 * i] | (raw[2 * i + 1] << 8));
  return q;
}

float depth_of_inverse(uint16_t q, float depth_near) {
  return q == 0 ? std::numeric_limits<float>::infinity() : depth_near * 65535.0f / float(q);
}

}  // namespace tessera
