#pragma once
// A compact byte encoding of a scene's animations and node hierarchy (gltf_animation.h), for a
// packed scene to carry. Little-endian, no padding:
//
//   "TANM", u32 version (1)
//   u32 node count, then per node: i32 parent, u8 kind (0: TRS, 1: matrix),
//       kind 0: 10 f32 (translation xyz, rotation xyzw, scale xyz); kind 1: 16 f32 column-major
//   u32 animation count, then per animation: u32 name bytes, the name (UTF-8, no terminator),
//       u32 channel count, then per channel: u32 node, u8 target (0 translation, 1 rotation,
//       2 scale), u8 interpolation (0 STEP, 1 LINEAR, 2 CUBICSPLINE), u32 key count,
//       key count f32 times, then key count * components (* 3 for CUBICSPLINE) f32 values
//
// and nothing after. Decoding checks every count against the bytes left before it allocates, then
// runs validate_animations(), so any byte string gives either a valid scene or one tessera::Error.
#include <cstdint>
#include <span>
#include <vector>

#include "common/scene/gltf_animation.h"

namespace tessera::anim {

inline constexpr uint32_t kAnimationEncodingVersion = 1;

std::vector<uint8_t> encode_animations(const AnimatedScene& scene);

// The scene again, derived fields filled (warnings: only what validation notes); throws tessera::Error on any malformed,
// truncated, over-long or other-version input.
AnimatedScene decode_animations(std::span<const uint8_t> bytes);

}  // namespace tessera::anim
