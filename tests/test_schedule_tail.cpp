// The dynamic schedule's frame end: the costliest tiles go first once their render times are
// known, and at the tail a worker that would idle gets a copy of a tile a busier worker still
// holds, when it would have it back sooner; the first copy back counts, the frame completes once,
// and the frames stay pixel for pixel those of tessera-render.
#include <gtest/gtest.h>

#include <chrono>

#include <nlohmann/json.hpp>

#include "cluster_test_support.h"
#include "master/schedule/tile_scheduler.h"

namespace tessera {
namespace {

using Given = std::vector<std::pair<uint64_t, uint32_t>>;

struct Recorder : master::ScheduleOutput {
  std::map<int, Given> given;
  std::vector<std::pair<int, uint64_t>> cancels;
  void request_tiles(int w, uint64_t f, const std::vector<uint32_t>& tiles) override {
    for (uint32_t t : tiles) given[w].push_back({f, t});
  }
  void assign_tiles(int w, uint64_t f, const std::vector<uint32_t>& tiles) override {
    for (uint32_t t : tiles) given[w].push_back({f, t});
  }
  void cancel_frame(int w, uint64_t f) override { cancels.push_back({w, f}); }
};

master::SchedulerPolicy dynamic(unsigned inflight) {
  master::SchedulerPolicy p;
  p.schedule = master::Schedule::dynamic;
  p.inflight = inflight;
  return p;
}

// Two workers with four slots each, costs known (10 ms a tile), frame 1 of 8 tiles dealt 4 and 4.
void open_two_worker_frame(master::TileScheduler& s) {
  s.add_worker(0);
  s.add_worker(1);
  for (uint32_t t = 0; t < 8; ++t) s.record_cost(0, t, 10.0);
  s.set_round_trip_ms(2.0);
  s.open_frame(1, 8);
}

TEST(ScheduleTail, CostliestTilesGoFirstOnceTheirCostsAreKnown) {
  for (const bool by_cost : {true, false}) {
    SCOPED_TRACE(by_cost ? "cost order" : "row order");
    Recorder out;
    auto policy = dynamic(1);
    policy.cost_order = by_cost;
    master::TileScheduler s(policy, out);
    s.add_worker(0);
    // The first frame knows no costs: row by row.
    s.open_frame(1, 4);
    for (uint32_t i = 0; i < 4; ++i) {
      const uint32_t t = out.given[0].back().second;
      EXPECT_EQ(t, i);
      s.record_cost(0, t, std::vector<double>{1, 5, 3, 2}[t]);
      s.tile_done(0, 1, t);
    }
    s.close_frame(1);
    out.given[0].clear();
    s.open_frame(2, 4);
    for (int i = 0; i < 4; ++i) s.tile_done(0, 2, out.given[0].back().second);
    EXPECT_EQ(out.given[0], by_cost ? (Given{{2, 1}, {2, 2}, {2, 3}, {2, 0}}) : (Given{{2, 0}, {2, 1}, {2, 2}, {2, 3}}));
  }
}

// Worker 1 returns its tiles while worker 0 still holds four: it is given copies of worker 0's
// last two (it would have them back sooner, link included) but not of the third-last (it would
// not). Each tile counts once; the straggler's late copy is a duplicate receipt, and the frame's
// close cancels the straggler, which may still be rendering it.
TEST(ScheduleTail, StragglersTileIsReissuedToAnIdleWorkerAndCountsOnce) {
  Recorder out;
  master::TileScheduler s(dynamic(4), out);
  open_two_worker_frame(s);
  ASSERT_EQ(out.given[0].size(), 4u);
  ASSERT_EQ(out.given[1].size(), 4u);
  const Given straggler = out.given[0];
  s.hold();  // worker 1's four tiles arrive in one burst
  for (const auto& [f, t] : Given(out.given[1])) EXPECT_EQ(s.tile_done(1, f, t), master::TileScheduler::Receipt::accepted);
  EXPECT_EQ(s.reissued(1), 0u);
  s.release();
  ASSERT_EQ(out.given[1].size(), 6u);
  EXPECT_EQ(out.given[1][4], straggler[3]);  // the one worker 0 would return last, first
  EXPECT_EQ(out.given[1][5], straggler[2]);
  EXPECT_EQ(s.reissued(1), 2u);
  EXPECT_TRUE(s.was_reissued(1, straggler[3].second));
  EXPECT_FALSE(s.was_reissued(1, straggler[1].second));
  EXPECT_EQ(s.assignments(1), 8u);  // copies are not assignments
  EXPECT_EQ(s.outstanding(1), 2u);
  // Worker 0 returns its first tile, then the copies come back, then worker 0's second tile; its
  // third comes too late. Nothing else is copied meanwhile: worker 1 would not be sooner.
  EXPECT_EQ(s.tile_done(0, 1, straggler[0].second), master::TileScheduler::Receipt::accepted);
  EXPECT_EQ(s.tile_done(1, 1, straggler[3].second), master::TileScheduler::Receipt::accepted);
  EXPECT_EQ(s.tile_done(1, 1, straggler[2].second), master::TileScheduler::Receipt::accepted);
  EXPECT_EQ(s.outstanding(0), 1u);
  EXPECT_EQ(s.outstanding(1), 0u);
  EXPECT_EQ(s.tile_done(0, 1, straggler[1].second), master::TileScheduler::Receipt::accepted);
  EXPECT_EQ(s.tile_done(0, 1, straggler[2].second), master::TileScheduler::Receipt::duplicate);
  EXPECT_EQ(s.outstanding(0), 0u);
  EXPECT_EQ(s.reissued(1), 2u);
  s.close_frame(1);
  EXPECT_EQ(out.cancels, (std::vector<std::pair<int, uint64_t>>{{0, 1}}));
}

// A worker that has said nothing for a second (a phone that froze: no tiles, no heartbeats) delivers
// nothing soon, whatever its speed says: an idle worker gets copies of everything it holds, so the
// frame waits about a second instead of the 5 s until the silent one is dropped.
TEST(ScheduleTail, ASilentWorkersTilesAreAllCopied) {
  Recorder out;
  master::TileScheduler s(dynamic(4), out);
  open_two_worker_frame(s);
  const Given silent = out.given[0];
  ASSERT_EQ(silent.size(), 4u);
  const auto now = std::chrono::steady_clock::now();
  s.heard_from(0, now - 2 * master::TileScheduler::kSilentAfter);
  s.heard_from(1, now);
  s.hold();
  for (const auto& [f, t] : Given(out.given[1])) s.tile_done(1, f, t);
  s.release();
  ASSERT_EQ(out.given[1].size(), 8u);
  for (const auto& tile : silent) EXPECT_TRUE(s.was_reissued(1, tile.second)) << tile.second;
  for (const auto& [f, t] : Given(out.given[1].begin() + 4, out.given[1].end()))
    EXPECT_EQ(s.tile_done(1, f, t), master::TileScheduler::Receipt::accepted);
  // once it speaks again it is a worker like any other
  s.heard_from(0, std::chrono::steady_clock::now());
}

TEST(ScheduleTail, NoCopiesWithoutCostsWhenTheLinkIsTooSlowOrWhenOff) {
  const auto copies = [](master::SchedulerPolicy policy, bool costs, double round_trip) {
    Recorder out;
    master::TileScheduler s(policy, out);
    s.add_worker(0);
    s.add_worker(1);
    if (costs)
      for (uint32_t t = 0; t < 8; ++t) s.record_cost(1, t, 10.0);
    s.set_round_trip_ms(round_trip);
    s.open_frame(1, 8);
    s.hold();
    for (const auto& [f, t] : Given(out.given[1])) s.tile_done(1, f, t);
    s.release();
    return s.reissued(1);
  };
  EXPECT_EQ(copies(dynamic(4), true, 2.0), 2u);
  EXPECT_EQ(copies(dynamic(4), false, 2.0), 0u);  // nothing measured yet
  EXPECT_EQ(copies(dynamic(4), true, 40.0), 0u);  // the copy could not be back sooner
  auto off = dynamic(4);
  off.reissue = false;
  EXPECT_EQ(copies(off, true, 2.0), 0u);
  auto pathtrace = dynamic(4);
  pathtrace.tile_affinity = true;  // samples accumulate where a tile was rendered
  EXPECT_EQ(copies(pathtrace, true, 2.0), 0u);
}

// The straggler is lost while its tile has a copy elsewhere: the copy's holder keeps it (not
// handed out a third time), the rest go to the survivor, and every tile is done once.
TEST(ScheduleTail, LostHolderLeavesItsCopiedTilesWithTheCopysHolder) {
  Recorder out;
  master::TileScheduler s(dynamic(4), out);
  open_two_worker_frame(s);
  const Given straggler = out.given[0];
  s.hold();
  for (const auto& [f, t] : Given(out.given[1])) s.tile_done(1, f, t);
  s.release();
  ASSERT_EQ(s.reissued(1), 2u);
  EXPECT_EQ(s.remove_worker(0), 4u);
  EXPECT_EQ(s.outstanding(1), 4u);  // two copies kept, two handed out again
  std::multiset<uint32_t> held;
  for (size_t i = 4; i < out.given[1].size(); ++i) held.insert(out.given[1][i].second);
  EXPECT_EQ(held, (std::multiset<uint32_t>{straggler[0].second, straggler[1].second, straggler[2].second, straggler[3].second}));
  for (uint32_t t : held) EXPECT_EQ(s.tile_done(1, 1, t), master::TileScheduler::Receipt::accepted);
  EXPECT_EQ(s.outstanding(1), 0u);
  EXPECT_TRUE(s.fully_assigned(1));
}

// End to end: one worker sleeps after every tile (a slower device), so the fast one idles at each
// frame's end and takes copies. The frames are tessera-render's, every tile composited once.
TEST(ScheduleTail, CopiedTilesKeepFramesIdenticalToTheSingleMachineRender) {
  testing::TempDir dir("schedule_tail");
  const auto secret = dir / "secret";
  testing::write_secret(secret, testing::kClusterSecret);
  const auto scenes = dir / "scenes";
  std::filesystem::create_directories(scenes);
  std::filesystem::copy_file(testing::cornell_tpk(), scenes / "cornell.tpk");
  testing::WorkerProcess fast(dir.path(), "fast", scenes, secret, {"--device", "host", "--threads", "1"});
  testing::WorkerProcess slow(dir.path(), "slow", scenes, secret, {"--device", "host", "--threads", "1", "--slowdown-ms", "30"});
  ASSERT_FALSE(fast.address().empty()) << fast.log();
  ASSERT_FALSE(slow.address().empty()) << slow.log();
  std::string poses = "t,px,py,pz,qw,qx,qy,qz\n";
  for (int i = 0; i < 4; ++i) poses += std::to_string(i) + "," + testing::kCornellPose + "\n";
  testing::write_text(dir / "poses.csv", poses);
  const ImageRgba8 ref = testing::reference_render(testing::cornell_tpk(), testing::kCornellPose, "96x64", dir / "ref.png");
  for (const std::string reissue : {"on", "off"}) {
    SCOPED_TRACE("--reissue " + reissue);
    const auto out = dir / reissue;
    const auto r = testing::run_command("timeout 60 " + testing::master_binary().string() + " --workers " + fast.address() + "," +
                                        slow.address() + " --scene " + testing::cornell_tpk().string() + " --secret-file " +
                                        secret.string() + " --no-status --size 96x64 --tile 16 --schedule dynamic --inflight 3 --reissue " +
                                        reissue + " --poses " + (dir / "poses.csv").string() + " --out " + out.string() +
                                        " --stats " + (out / "stats.json").string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (int i = 0; i < 4; ++i) EXPECT_EQ(read_image(out / ("frame_00000" + std::to_string(i) + ".png")), ref) << i;
    const auto stats = nlohmann::json::parse(read_file_text(out / "stats.json"));
    ASSERT_EQ(stats["frames"].size(), 4u);
    uint32_t copies = 0;
    for (const auto& f : stats["frames"]) {
      EXPECT_TRUE(f["complete"].get<bool>());
      EXPECT_EQ(f["tiles_received"], f["tiles"]);
      EXPECT_EQ(f["duplicates"], 0);
      EXPECT_EQ(f["assignments"], f["tiles"]);
      uint32_t sum = 0;
      for (const auto& w : f["workers"]) sum += w["tiles"].get<uint32_t>();
      EXPECT_EQ(sum, f["tiles"].get<uint32_t>());
      copies += f["reissued"].get<uint32_t>();
    }
    if (reissue == "on")
      EXPECT_GT(copies, 0u);
    else
      EXPECT_EQ(copies, 0u);
  }
}

}  // namespace
}  // namespace tessera
