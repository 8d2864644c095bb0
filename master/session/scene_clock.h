#pragma once
// The scene's clock in a live session (tessera-master --serve): the time at which every frame's
// animations are evaluated (FrameRequest.scene_time_s). It runs at `time_scale` seconds of scene
// time a second of wall time from where it was started or last seeked to, and stands still while
// paused; a scale of 0 is a clock that never runs (tessera-master --time-scale 0). Not thread-safe:
// its owner guards it.
#include <chrono>

namespace tessera::master {

class SceneClock {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts at `start_s`, playing unless time_scale is 0. Throws Error for a scale or time that is
  // not finite, a negative scale or one above kMaxTimeScale.
  explicit SceneClock(double time_scale = 1.0, double start_s = 0.0, Clock::time_point at = Clock::now());

  double now(Clock::time_point at = Clock::now()) const;
  bool playing() const { return playing_; }
  double time_scale() const { return time_scale_; }

  void play(Clock::time_point at = Clock::now());   // nothing while it plays, or with scale 0
  void pause(Clock::time_point at = Clock::now());  // holds the time it shows now
  void seek(double seconds, Clock::time_point at = Clock::now());  // keeps playing or paused

  static constexpr double kMaxTimeScale = 1000;
  static constexpr double kMaxTime = 1e9;  // seconds either side of 0 (the animations' key-time limit)

 private:
  double time_scale_;
  double base_s_;          // the scene time at base_at_
  Clock::time_point base_at_;
  bool playing_;
};

// Checks a scene time the page or the command line gives: Error("<what> ...") when it is not
// finite or beyond kMaxTime.
double checked_scene_time(double seconds, const char* what);

}  // namespace tessera::master
