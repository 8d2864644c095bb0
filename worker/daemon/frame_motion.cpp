#include "worker/daemon/frame_motion.h"

#include <cmath>
#include <string>
#include <vector>

#include "common/base/error.h"
#include "common/scene/scene_motion.h"

namespace tessera::worker {

namespace {
constexpr double kMaxSceneTime = 1e9;  // seconds either side of 0 (the animations' key-time limit)
}

FrameMotion frame_motion(const wire::FrameRequest& request, uint32_t instance_count) {
  FrameMotion motion;
  motion.time_s = request.scene_time_s();
  if (!std::isfinite(motion.time_s) || std::fabs(motion.time_s) > kMaxSceneTime)
    throw Error("scene_time_s must be a finite number of seconds within 1e9 of 0");
  motion.placed.reserve(size_t(request.instance_transforms_size()));
  for (const auto& t : request.instance_transforms()) {
    const std::string what = "instance " + std::to_string(t.instance());
    if (t.instance() >= instance_count)
      throw Error(what + ": the scene has " + std::to_string(instance_count) + " instances");
    if (t.matrix_size() != 12) throw Error(what + ": " + std::to_string(t.matrix_size()) + " matrix entries, not 12");
    Transform3x4 world;
    for (int i = 0; i < 12; ++i) world.m[size_t(i)] = t.matrix(i);
    check_transform(world, what);
    motion.placed.emplace_back(t.instance(), world);
  }
  return motion;
}

bool pose_scene(SceneMotion& motion, const FrameMotion& frame) {
  // Only what differs changes: an instance held in place frame after frame is no move (clearing and
  // placing it again would rebuild the top level and restart path-traced accumulation every frame).
  std::vector<uint8_t> placed(motion.instance_count(), 0);
  for (const auto& [instance, world] : frame.placed)
    if (instance < placed.size()) placed[instance] = 1;
  for (uint32_t i = 0; i < motion.instance_count(); ++i)
    if (!placed[i] && motion.has_instance_transform(i)) motion.clear_instance_transform(i);
  motion.set_time(frame.time_s);
  for (const auto& [instance, world] : frame.placed) motion.set_instance_transform(instance, world);
  return motion.changed();
}

}  // namespace tessera::worker
