#include "master/live/rate_controller.h"

#include <algorithm>

namespace tessera::master::live {
namespace {

constexpr double kDecrease = 0.7;        // a congested report cuts the rate to 70 %
constexpr double kIncreaseMbitPerSecond = 4;  // while the link keeps up
constexpr auto kDecreaseSpacing = std::chrono::milliseconds(250);  // the reports of one queue count once
constexpr auto kIncreaseStep = std::chrono::milliseconds(250);
constexpr auto kRecoveryBeforeScaleUp = std::chrono::seconds(2);
constexpr double kQueueIntervals = 2;    // network+queue above this many frame intervals: congested
constexpr double kRefinementBoost = 1.5;  // a held pose's refinements: sharper, and the link has room (they are few)
constexpr double kMinIntervalMs = 8;     // a 120 Hz headset's frame: the least interval the test uses

}  // namespace

RateController::RateController(RateOptions options) : options_(options), bitrate_(options.start_mbit) {
  if (options_.automatic) bitrate_ = std::min(bitrate_, options_.max_mbit);
}

double RateController::bitrate_for(bool refinement) const {
  if (!refinement || !options_.automatic) return bitrate_;
  return std::min(options_.max_mbit, bitrate_ * kRefinementBoost);
}

void RateController::acknowledged(double network_ms, double frame_interval_ms, Clock::time_point now) {
  if (!options_.automatic) return;
  if (network_ms > kQueueIntervals * std::max(kMinIntervalMs, frame_interval_ms))
    congested(now);
  else
    keeping_up(now);
}

void RateController::socket_behind(Clock::time_point now) {
  if (options_.automatic) congested(now);
}

void RateController::congested(Clock::time_point now) {
  good_run_ = false;
  if (now - last_decrease_ < kDecreaseSpacing) return;
  last_decrease_ = now;
  bitrate_ = std::max(options_.min_mbit, bitrate_ * kDecrease);
  // Fewer pixels rather than more blur: scale 0.75 below the floor, 0.5 below half of it.
  const int wanted = bitrate_ < options_.floor_mbit / 2 ? 2 : bitrate_ < options_.floor_mbit ? 1 : 0;
  scale_step_ = std::max(scale_step_, wanted);
}

void RateController::keeping_up(Clock::time_point now) {
  if (!good_run_) {
    good_run_ = true;
    good_since_ = now;
    last_increase_ = now;
    return;
  }
  if (now - last_increase_ < kIncreaseStep) return;
  const double seconds = std::chrono::duration<double>(now - last_increase_).count();
  last_increase_ = now;
  // The resolution comes back a step for every while the link keeps up, before the rate is high again.
  if (scale_step_ > 0 && now - good_since_ >= kRecoveryBeforeScaleUp) {
    --scale_step_;
    good_since_ = now;
  }
  bitrate_ = std::min(options_.max_mbit, bitrate_ + kIncreaseMbitPerSecond * seconds);
}

}  // namespace tessera::master::live
