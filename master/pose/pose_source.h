#pragma once
// Where head poses come from: a trajectory file, a generated orbit or turntable, the scene's fixed
// camera, or a live UDP stream.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "master/pose/pose_sample.h"
#include "tpk.pb.h"

namespace tessera::master {

class PoseSource {
 public:
  virtual ~PoseSource() = default;
  // The next pose, or nullopt when the source has ended. May block (UDP waits for its first pose).
  virtual std::optional<PoseSample> next() = 0;
  // How many poses remain known in advance (files), or nullopt (orbit, UDP: unbounded).
  virtual std::optional<size_t> length() const { return std::nullopt; }
  virtual std::string describe() const = 0;
  // Poses arrive as they happen (a headset): a frame older than one already shown is of no use.
  virtual bool live() const { return false; }

  // Live sources (a person moving) have nothing to render while the pose holds still; the session
  // asks them without blocking. nullopt with ended false: nothing new yet, ask again later.
  struct Offer {
    std::optional<PoseSample> pose;
    bool ended = false;
  };
  virtual Offer poll() {
    auto pose = next();
    return {pose, !pose};
  }
  // Live sources call `wake` (any thread) when poll() has something new, so the session need not spin.
  virtual void set_wake(std::function<void()> wake) {}
  // A pose newer than the frames in flight waits: the session may cancel refinements of the old one.
  virtual bool newer_pose_waiting() const { return false; }
};

struct PoseSourceOptions {
  double udp_timeout_seconds = 10;  // UDP: wait this long for the first pose, and end after this long silent
  unsigned orbit_frames = 36;       // orbit, turntable: poses per revolution
  // orbit: ellipse radii as a share of the scene's half extents (> 1 leaves the bounds);
  // turntable: distance as a share of the one that frames the bounds (1 by default)
  float orbit_scale = 0.3f;
  float vertical_fov_degrees = 0;   // turntable framing; 0: the scene camera's
};

// `spec`: a file path, "orbit", "turntable", "camera", or "udp://HOST:PORT". Throws Error naming
// the problem.
std::unique_ptr<PoseSource> make_pose_source(const std::string& spec, const tpk::Manifest& scene, const PoseSourceOptions& options);

}  // namespace tessera::master
