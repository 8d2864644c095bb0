#include "master/stats/record_window.h"

#include <algorithm>
#include <iterator>

namespace tessera::master {

void RecordWindow::add(FrameRecord record, bool bounded) {
  records_.push_back(std::move(record));
  if (!bounded || records_.size() < kept_ + std::max<size_t>(1, kept_ / 8)) return;
  const auto keep_from = records_.end() - std::ptrdiff_t(kept_);
  for (auto r = records_.begin(); r != keep_from; ++r) {
    ++(r->complete ? retired_complete_ : r->superseded ? retired_superseded_ : retired_failed_);
    retired_reissued_ += r->reissued;
  }
  records_.erase(records_.begin(), keep_from);
}

RunSummary RecordWindow::summary(RunSummary base) const {
  RunSummary s = summarize(records_, std::move(base));
  s.frames_complete += retired_complete_;
  s.frames_failed += retired_failed_;
  s.frames_superseded += retired_superseded_;
  s.tiles_reissued += retired_reissued_;
  if (s.wall_seconds > 0) s.frames_per_second = double(s.frames_complete) / s.wall_seconds;
  return s;
}

}  // namespace tessera::master
