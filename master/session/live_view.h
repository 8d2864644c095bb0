#pragma once
// The parts of a FrameRequest that come from a live pose: the eyes as rendered (each its own pose
// and off-axis frustum, replacing the head pose, ipd and projection, when they go out explicitly:
// XR views, or any eye widened by the guard band) and the anti-aliasing sample.
#include "master/pose/pose_sample.h"
#include "master/session/rendered_eyes.h"
#include "wire.pb.h"

namespace tessera::master {

void set_live_view(wire::FrameRequest& request, const PoseSample& pose, const RenderedEyes& eyes);

}  // namespace tessera::master
