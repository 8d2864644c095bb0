#pragma once
// A page's video bitrate and coded resolution, adapted to its link (master/web/PROTOCOL.md, "Rate
// control"): additive increase, multiplicative decrease, like TCP. Congestion shows as a frame's
// network+queue time (from the page's `displayed`) above about two frame intervals, or as more than
// one frame's bytes still unsent on the socket when the next frame is due (socket_behind). Below a floor bitrate
// the resolution steps down (scale 0.75, then 0.5) instead, and when the link keeps up again the
// resolution comes back first, then the bitrate. A fixed bitrate (--stream-bitrate MBIT) is
// never changed.
#include <chrono>
#include <cstddef>

namespace tessera::master::live {

struct RateOptions {
  bool automatic = true;
  double start_mbit = 30, max_mbit = 80;  // automatic: the start and the cap; fixed: start_mbit is the rate
  double floor_mbit = 8;                  // below it the resolution steps down
  double min_mbit = 2;                    // never below it at the smallest scale
};

class RateController {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RateController(RateOptions options);

  // A page's report on a frame: its way from the master's socket to the page plus the report's way
  // back (network+queue, ms) and the mean interval between the stream's recent frames (ms).
  void acknowledged(double network_ms, double frame_interval_ms, Clock::time_point now);
  // A new frame is due while the previous one is still not written to the socket after about two
  // frame intervals: more than a frame's bytes wait there.
  void socket_behind(Clock::time_point now);

  double bitrate_mbit() const { return bitrate_; }
  // The rate for a frame: held-pose refinements get half as much again (automatic: up to the cap).
  double bitrate_for(bool refinement) const;
  double scale() const { return kScales[scale_step_]; }  // 1, 0.75 or 0.5 of the frame's size
  bool automatic() const { return options_.automatic; }

  static constexpr double kScales[] = {1.0, 0.75, 0.5};

 private:
  void congested(Clock::time_point now);
  void keeping_up(Clock::time_point now);

  RateOptions options_;
  double bitrate_;
  int scale_step_ = 0;
  Clock::time_point last_decrease_{}, last_increase_{}, good_since_{};
  bool good_run_ = false;
};

}  // namespace tessera::master::live
