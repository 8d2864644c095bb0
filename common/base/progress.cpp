#include "common/base/progress.h"

#include <algorithm>
#include <cstdio>
#include <unistd.h>

namespace tessera {

ProgressBar::ProgressBar(std::string label) : label_(std::move(label)), enabled_(::isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(double fraction, const std::string& detail) {
  if (!enabled_ || finished_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100) && fraction < 1.0) return;
  last_draw_ = now;
  fraction = std::clamp(fraction, 0.0, 1.0);
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  std::fprintf(stderr, "\r\033[K%s [%s] %3d%% %s", label_.c_str(), bar.c_str(), static_cast<int>(fraction * 100),
               detail.c_str());
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

}  // namespace tessera
