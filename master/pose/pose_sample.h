#pragma once
// One head pose as a pose source delivers it.
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/render/camera_setup.h"
#include "common/render/eye_view.h"

namespace tessera::master {

struct PoseSample {
  double time = 0;                                   // the source's timestamp, seconds
  Pose pose;                                         // unit quaternion
  std::optional<std::array<float, 2>> gaze;          // [0, 1] image coordinates
  std::chrono::steady_clock::time_point acquired{};  // when the master got it (latency origin)
  // Live sources only.
  uint64_t id = 0;            // the client's pose id (0: none)
  double client_time_ms = 0;  // the client's clock when it sampled the pose
  std::vector<EyeView> views; // 1 (mono) or 2 (left, right) eyes that replace pose, ipd and projection
  uint32_t aa_sample = 0;     // 0: pixel centres; k > 0: the k-th jittered sub-pixel offset
  uint32_t refinement = 0;    // 0: the first frame of this pose; k: its k-th refinement (same view)
};

}  // namespace tessera::master
