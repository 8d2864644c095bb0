#pragma once
// A one-line progress bar on stderr, drawn only when stderr is a terminal and at most ~10 times
// a second, so it costs nothing in scripts and CI logs.
#include <chrono>
#include <string>

namespace tessera {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  ~ProgressBar();
  // fraction in [0, 1]; `detail` is shown after the bar (e.g. "120k/262k triangles").
  void update(double fraction, const std::string& detail = {});
  void finish();

  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

 private:
  std::string label_;
  bool enabled_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace tessera
