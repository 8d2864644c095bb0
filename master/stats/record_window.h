#pragma once
// The frame records a session keeps. A run of N frames keeps all N; a live session runs for hours,
// so it keeps the newest (between `kept` and an eighth more: the oldest eighth goes at once, so
// erasing is rare and memory does not swing) and only the counts of the older ones, which its
// summary adds. Its memory stays flat after a few seconds of frames (deploy/soak).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "master/stats/frame_stats.h"

namespace tessera::master {

inline constexpr size_t kLiveRecordsKept = 256;

class RecordWindow {
 public:
  explicit RecordWindow(size_t kept = kLiveRecordsKept) : kept_(kept) {}

  // bounded: a live session's record (older ones may be retired); otherwise every one is kept.
  void add(FrameRecord record, bool bounded);
  std::vector<FrameRecord>& records() { return records_; }
  const std::vector<FrameRecord>& records() const { return records_; }
  // summarize() of the kept records, the retired ones' counts added (frames, tiles reissued, frame rate).
  RunSummary summary(RunSummary base) const;

 private:
  size_t kept_;
  std::vector<FrameRecord> records_;
  size_t retired_complete_ = 0, retired_failed_ = 0, retired_superseded_ = 0;
  uint64_t retired_reissued_ = 0;
};

}  // namespace tessera::master
