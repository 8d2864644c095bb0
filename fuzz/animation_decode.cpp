// Animation data as a packed scene will carry it (common/scene/animation_codec.h): bytes that
// decode are a validated scene, which is then evaluated at a few times, looped and clamped.
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/base/error.h"
#include "common/scene/animation_codec.h"
#include "common/scene/animation_player.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const tessera::anim::AnimatedScene scene = tessera::anim::decode_animations(std::span<const uint8_t>(data, size));
    tessera::anim::Pose pose;
    for (double t : {-1.5, 0.0, 0.37, 2.0, 1e6})
      for (auto playback : {tessera::anim::Playback::loop, tessera::anim::Playback::clamp})
        (void)tessera::anim::evaluate(scene, t, playback, pose);
  } catch (const tessera::Error&) {
  }
  return 0;
}
