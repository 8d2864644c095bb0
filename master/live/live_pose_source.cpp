#include "master/live/live_pose_source.h"

namespace tessera::master::live {

void LivePoseSource::submit(PoseSample pose) {
  pose.acquired = std::chrono::steady_clock::now();
  std::function<void()> wake;
  {
    std::lock_guard lock(mutex_);
    waiting_ = std::move(pose);
    ++received_;
    wake = wake_;
  }
  if (wake) wake();
}

void LivePoseSource::set_refinement(uint32_t frames_per_pose, bool jitter) {
  std::function<void()> wake;
  {
    std::lock_guard lock(mutex_);
    frames_per_pose_ = std::max(1u, frames_per_pose);
    jitter_ = jitter;
    if (held_ && !waiting_) waiting_ = held_;  // the held view again, from its first sample
    wake = wake_;
  }
  if (wake) wake();
}

void LivePoseSource::set_motion_check(std::function<bool(const PoseSample&)> moved_in_view) {
  std::function<void()> wake;
  {
    std::lock_guard lock(mutex_);
    moved_in_view_ = std::move(moved_in_view);
    wake = wake_;
  }
  if (wake) wake();
}

void LivePoseSource::scene_changed() {
  std::function<void()> wake;
  {
    std::lock_guard lock(mutex_);
    wake = wake_;
  }
  if (wake) wake();
}

void LivePoseSource::close() {
  std::function<void()> wake;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    wake = wake_;
  }
  if (wake) wake();
}

PoseSource::Offer LivePoseSource::poll() {
  std::unique_lock lock(mutex_);
  if (closed_) return {std::nullopt, true};
  if (waiting_) {
    held_ = std::move(waiting_);
    waiting_.reset();
    held_->refinement = 0;
    held_->aa_sample = 0;
    issued_ = 1;
    return {held_, false};
  }
  if (!held_) return {};
  if (moved_in_view_) {
    // The check takes the session's own lock, which is held while it calls in here: ask it unlocked.
    const PoseSample held = *held_;
    const auto moved_in_view = moved_in_view_;
    lock.unlock();
    const bool moved = moved_in_view(held);
    lock.lock();
    if (closed_ || waiting_ || !held_ || held_->id != held.id) {  // changed meanwhile
      lock.unlock();
      return poll();
    }
    if (moved) {  // a new picture: a first sample again
      PoseSample again = *held_;
      again.refinement = 0;
      again.aa_sample = 0;
      again.acquired = std::chrono::steady_clock::now();
      issued_ = 1;
      return {again, false};
    }
  }
  if (issued_ >= frames_per_pose_) return {};
  PoseSample refined = *held_;
  refined.refinement = issued_;
  refined.aa_sample = jitter_ ? issued_ : 0;
  refined.acquired = std::chrono::steady_clock::now();  // a refinement answers no pose: its latency counts from now
  ++issued_;
  return {refined, false};
}

void LivePoseSource::enough_samples(uint64_t pose_id) {
  std::lock_guard lock(mutex_);
  if (held_ && held_->id == pose_id) issued_ = std::max(issued_, frames_per_pose_);
}

std::optional<PoseSample> LivePoseSource::next() { return poll().pose; }

void LivePoseSource::set_wake(std::function<void()> wake) {
  std::lock_guard lock(mutex_);
  wake_ = std::move(wake);
}

bool LivePoseSource::newer_pose_waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_.has_value();
}

uint64_t LivePoseSource::poses_received() const {
  std::lock_guard lock(mutex_);
  return received_;
}

}  // namespace tessera::master::live
