#pragma once
// Poses from the driving page. The newest pose replaces the one waiting (poses are never queued:
// a frame starts from the freshest head pose). When the pose holds, the session gets refinements
// of it instead, up to a limit: more jittered samples (raytrace, vct: aa_sample 1, 2, ...) or more
// accumulated path samples (pathtrace: the same view again), then nothing until the next pose.
// When something the held view shows moved (set_motion_check), the held pose renders afresh instead.
#include <functional>
#include <mutex>
#include <optional>

#include "master/pose/pose_source.h"

namespace tessera::master::live {

class LivePoseSource final : public PoseSource {
 public:
  // Any thread. `pose.acquired` is set here.
  void submit(PoseSample pose);
  // Frames per held pose, the first included; `jitter`: refinements use aa_sample 1, 2, ...
  // Renders the held pose afresh (settings changed).
  void set_refinement(uint32_t frames_per_pose, bool jitter);
  // The held pose `pose_id`'s frames reached their cap (the workers' path tracer kept accumulating
  // across a settings change, so counting frames here would overshoot): no more refinements of it.
  void enough_samples(uint64_t pose_id);
  // Asked before every further frame of the held pose (on the thread that polls, without this
  // source's lock): whether something its view shows moved since the pose's last first frame. Then
  // the held pose renders afresh from its first sample (samples of different pictures must not be
  // averaged), else its refinement goes on; none: nothing moves.
  void set_motion_check(std::function<bool(const PoseSample& held)> moved_in_view);
  // Something in the scene moved: the session polls again now (the motion check decides).
  void scene_changed();
  void close();  // poll() reports the end

  Offer poll() override;
  std::optional<PoseSample> next() override;  // not used by the live session: poll() without waiting
  void set_wake(std::function<void()> wake) override;
  bool newer_pose_waiting() const override;
  bool live() const override { return true; }
  std::string describe() const override { return "the live session's driving page"; }
  uint64_t poses_received() const;

 private:
  mutable std::mutex mutex_;
  std::optional<PoseSample> waiting_, held_;
  uint32_t issued_ = 0;  // frames handed out for held_
  uint32_t frames_per_pose_ = 1;
  bool jitter_ = false, closed_ = false;
  uint64_t received_ = 0;
  std::function<void()> wake_;
  std::function<bool(const PoseSample&)> moved_in_view_;
};

}  // namespace tessera::master::live
