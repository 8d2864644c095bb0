#pragma once
// The parts of a FrameRequest that come from a live pose: the XR eyes (each its own pose and
// off-axis frustum, replacing the head pose, ipd and projection) and the anti-aliasing sample.
#include "master/pose/pose_sample.h"
#include "wire.pb.h"

namespace tessera::master {

void set_live_view(wire::FrameRequest& request, const PoseSample& pose);

}  // namespace tessera::master
