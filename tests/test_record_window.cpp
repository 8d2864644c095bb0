// The frame records a session keeps: a run keeps every frame; a live session (hours of frames)
// keeps its newest and only counts the older ones, so the master's memory stays flat under a soak
// (deploy/soak found it growing by the frame) while its summary still counts every frame.
#include <gtest/gtest.h>

#include "master/stats/record_window.h"

namespace {

using namespace tessera::master;

FrameRecord record(uint64_t id, bool complete, bool superseded = false, uint32_t reissued = 0) {
  FrameRecord r;
  r.frame_id = id;
  r.complete = complete;
  r.superseded = superseded;
  r.reissued = reissued;
  r.workers.resize(8);
  return r;
}

TEST(RecordWindow, ALiveSessionKeepsItsNewestFramesAndCountsEveryOne) {
  RecordWindow window(10);
  for (uint64_t id = 1; id <= 1000; ++id) window.add(record(id, id % 10 != 0, id % 10 == 0 && id % 20 != 0, id % 50 == 0), true);
  EXPECT_GE(window.records().size(), 10u);
  EXPECT_LE(window.records().size(), 11u);
  EXPECT_EQ(window.records().back().frame_id, 1000u);
  const RunSummary s = window.summary({});
  EXPECT_EQ(s.frames_complete, 900u);
  EXPECT_EQ(s.frames_superseded, 50u);
  EXPECT_EQ(s.frames_failed, 50u);
  EXPECT_EQ(s.tiles_reissued, 20u);
}

TEST(RecordWindow, ARunKeepsEveryFrame) {
  RecordWindow window(10);
  for (uint64_t id = 1; id <= 100; ++id) window.add(record(id, true), false);
  EXPECT_EQ(window.records().size(), 100u);
  EXPECT_EQ(window.summary({}).frames_complete, 100u);
}

}  // namespace
