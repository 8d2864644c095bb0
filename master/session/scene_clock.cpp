#include "master/session/scene_clock.h"

#include <cmath>
#include <string>

#include "common/base/error.h"

namespace tessera::master {

double checked_scene_time(double seconds, const char* what) {
  if (!std::isfinite(seconds) || std::fabs(seconds) > SceneClock::kMaxTime)
    throw Error(std::string(what) + " must be a finite number of seconds within 1e9 of 0");
  return seconds;
}

SceneClock::SceneClock(double time_scale, double start_s, Clock::time_point at)
    : time_scale_(time_scale), base_s_(checked_scene_time(start_s, "the start time")), base_at_(at), playing_(time_scale > 0) {
  if (!std::isfinite(time_scale) || time_scale < 0 || time_scale > kMaxTimeScale)
    throw Error("the time scale must lie in 0..1000 (0: the clock stands still)");
}

double SceneClock::now(Clock::time_point at) const {
  if (!playing_) return base_s_;
  const double t = base_s_ + time_scale_ * std::chrono::duration<double>(at - base_at_).count();
  // A clock left running for ever wraps within the limit rather than leave it (animations loop).
  return std::fabs(t) > kMaxTime ? std::fmod(t, kMaxTime) : t;
}

void SceneClock::play(Clock::time_point at) {
  if (playing_ || time_scale_ <= 0) return;
  base_at_ = at;
  playing_ = true;
}

void SceneClock::pause(Clock::time_point at) {
  if (!playing_) return;
  base_s_ = now(at);
  base_at_ = at;
  playing_ = false;
}

void SceneClock::seek(double seconds, Clock::time_point at) {
  base_s_ = checked_scene_time(seconds, "the time");
  base_at_ = at;
}

}  // namespace tessera::master
