#pragma once
// The instant of the scene a frame request asks for ("scene_motion": FrameRequest.scene_time_s and
// instance_transforms), checked, and applied to a scene's motion before the frame's tiles render:
// every tile of one frame shows the same instant.
#include <cstdint>
#include <utility>
#include <vector>

#include "common/scene/scene_nodes.h"
#include "wire.pb.h"

namespace tessera {
class SceneMotion;
}

namespace tessera::worker {

struct FrameMotion {
  double time_s = 0;
  std::vector<std::pair<uint32_t, Transform3x4>> placed;  // instance (the scene's order), object to world
  bool operator==(const FrameMotion&) const = default;
};

// The request's scene time and instance transforms. Throws Error for a time that is not finite or
// beyond 1e9 s, a matrix of other than 12 entries, a transform with a NaN or infinite entry or
// scale 0, or an instance index not below `instance_count` (0 for a single-level scene, which has
// nothing to place).
FrameMotion frame_motion(const wire::FrameRequest& request, uint32_t instance_count);

// Poses `motion` at the frame's instant (its time, then its placed instances; any placed before and
// not now go back to their animation). True when an instance moved since the top level was last
// taken (SceneMotion::changed).
bool pose_scene(SceneMotion& motion, const FrameMotion& frame);

}  // namespace tessera::worker
