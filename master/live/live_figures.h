#pragma once
// Small helpers for the live session's figures (status message, statistics): its time windows,
// milliseconds between two instants, percentiles of recent values.
#include <algorithm>
#include <chrono>
#include <vector>

namespace tessera::master::live {

inline constexpr auto kStatusInterval = std::chrono::milliseconds(250);
// How often the session gives free heap memory back (release_free_heap_memory): a transient's
// high-water mark is gone within this, at the price of faulting one frame's buffers in again.
inline constexpr auto kFreeMemoryReleaseInterval = std::chrono::seconds(10);
inline constexpr auto kRateWindow = std::chrono::seconds(2);      // fps, tiles/s, busy %, Mbit/s
inline constexpr size_t kPoseMemory = 4096;  // pose ids kept for `displayed`, frames for their reports
inline constexpr auto kLatencyWindow = std::chrono::seconds(60);  // the status's latency median and p95

inline double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

inline double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(double(v.size()) * q))];
}

inline double median(std::vector<double> v) { return percentile(std::move(v), 0.5); }

}  // namespace tessera::master::live
