#pragma once
// One head pose as a pose source delivers it.
#include <array>
#include <chrono>
#include <optional>

#include "common/render/camera_setup.h"

namespace tessera::master {

struct PoseSample {
  double time = 0;                                   // the source's timestamp, seconds
  Pose pose;                                         // unit quaternion
  std::optional<std::array<float, 2>> gaze;          // [0, 1] image coordinates
  std::chrono::steady_clock::time_point acquired{};  // when the master got it (latency origin)
};

}  // namespace tessera::master
