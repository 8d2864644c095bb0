// Things that move in a live session (docs/live-session.md, PROTOCOL.md "Things that move"): the scene
// clock plays, pauses and seeks; clock, pick and move messages are checked, a bad one is one event and
// the session goes on; a held pose renders afresh when something in its view moved, else its refinement
// goes on (at the instant of its first frame), also while the clock plays; every frame names the scene
// time it was rendered at.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "common/base/error.h"
#include "live_test_support.h"
#include "master/live/client_messages.h"
#include "master/live/live_pose_source.h"
#include "master/session/scene_clock.h"
#include "two_cubes_scene.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;
using namespace master::live;
using nlohmann::json;
using namespace testing::live;

TEST(SceneClock, PlaysAtItsScalePausesAndSeeks) {
  const auto t0 = master::SceneClock::Clock::time_point{} + 100s;
  master::SceneClock clock(2.0, 1.5, t0);
  EXPECT_TRUE(clock.playing());
  EXPECT_DOUBLE_EQ(clock.now(t0), 1.5);
  EXPECT_DOUBLE_EQ(clock.now(t0 + 500ms), 2.5);  // two seconds of scene time a second
  clock.pause(t0 + 1s);
  EXPECT_FALSE(clock.playing());
  EXPECT_DOUBLE_EQ(clock.now(t0 + 10s), 3.5);  // held where it was paused
  clock.seek(0.25, t0 + 10s);
  EXPECT_DOUBLE_EQ(clock.now(t0 + 20s), 0.25);  // paused: a seek keeps it paused
  clock.play(t0 + 20s);
  EXPECT_DOUBLE_EQ(clock.now(t0 + 21s), 2.25);
  clock.seek(-4, t0 + 21s);  // playing: a seek keeps it playing
  EXPECT_DOUBLE_EQ(clock.now(t0 + 22s), -2.0);

  master::SceneClock still(0.0, 7.0, t0);  // --time-scale 0: the clock stands still
  EXPECT_FALSE(still.playing());
  still.play(t0);
  EXPECT_FALSE(still.playing());
  EXPECT_DOUBLE_EQ(still.now(t0 + 1h), 7.0);

  EXPECT_THROW(master::SceneClock(-1.0), Error);
  EXPECT_THROW(master::SceneClock(1.0, std::nan("")), Error);
  EXPECT_THROW(clock.seek(2e9), Error);
  EXPECT_DOUBLE_EQ(clock.now(t0 + 22s), -2.0);  // a refused seek changes nothing
}

TEST(LiveMotionPieces, ClockPickAndMoveMessagesAreCheckedNotFatal) {
  const auto clock = std::get<ClockChange>(parse_client_message(R"({"type":"clock","playing":false,"time":2.5})"));
  EXPECT_EQ(clock.playing, false);
  EXPECT_EQ(clock.time, 2.5);
  EXPECT_FALSE(std::get<ClockChange>(parse_client_message(R"({"type":"clock","playing":true})")).time);
  const auto pick = std::get<Pick>(parse_client_message(R"({"type":"pick","id":7,"origin":[1,2,3],"direction":[0,0,-1]})"));
  EXPECT_EQ(pick.id, 7u);
  EXPECT_EQ(pick.origin[2], 3.0f);
  const auto move = std::get<Move>(parse_client_message(R"({"type":"move","instance":3,"transform":[1,0,0,5, 0,1,0,6, 0,0,1,7]})"));
  EXPECT_EQ(move.instance, 3u);
  ASSERT_TRUE(move.world);
  EXPECT_EQ((*move.world)[7], 6.0f);
  EXPECT_FALSE(std::get<Move>(parse_client_message(R"({"type":"move","instance":3,"transform":null})")).world);  // back to its animation
  for (const char* refused : {R"({"type":"clock","time":null})", R"({"type":"clock","time":1e10})", R"({"type":"clock","playing":"yes"})",
                              R"({"type":"pick","origin":[0,0,0],"direction":[0,0,0]})", R"({"type":"pick","origin":[0,null,0],"direction":[0,0,1]})",
                              R"({"type":"pick","direction":[0,0,1]})", R"({"type":"move","instance":1,"transform":[1,0,0,0, 0,1,0,0, 0,0,null,0]})",
                              R"({"type":"move","instance":1,"transform":[1,0,0,0]})", R"({"type":"move","instance":1.5,"transform":null})",
                              R"({"type":"move","instance":70000,"transform":null})", R"({"type":"move","transform":null})"}) {
    SCOPED_TRACE(refused);
    const ClientMessage m = parse_client_message(refused);
    ASSERT_TRUE(std::holds_alternative<RefusedRequest>(m));
    EXPECT_FALSE(std::get<RefusedRequest>(m).reason.empty());
  }
}

TEST(LiveMotionPieces, AHeldPoseRendersAfreshWhenItsViewSawMotionElseItsRefinementGoesOn) {
  LivePoseSource source;
  source.set_refinement(4, true);
  master::PoseSample pose;
  pose.id = 5;
  source.submit(pose);
  ASSERT_TRUE(source.poll().pose);
  bool in_view = true;
  std::vector<uint64_t> asked;
  source.set_motion_check([&](const master::PoseSample& held) {
    asked.push_back(held.id);
    return in_view;
  });
  for (int i = 0; i < 10; ++i) {  // as long as something in view moves: every frame a first sample of the held pose
    const auto again = source.poll().pose;
    ASSERT_TRUE(again);
    EXPECT_EQ(again->id, 5u);
    EXPECT_EQ(again->refinement, 0u);
    EXPECT_EQ(again->aa_sample, 0u);
  }
  EXPECT_EQ(asked, std::vector<uint64_t>(10, 5));
  in_view = false;  // motion out of view (or none): the last picture is refined up to the cap
  for (uint32_t k = 1; k < 4; ++k) {
    const auto refined = source.poll().pose;
    ASSERT_TRUE(refined);
    EXPECT_EQ(refined->refinement, k);
    EXPECT_EQ(refined->aa_sample, k);
  }
  EXPECT_FALSE(source.poll().pose);
  in_view = true;  // capped, then something in view moves: a new picture of the held pose
  const auto after_cap = source.poll().pose;
  ASSERT_TRUE(after_cap);
  EXPECT_EQ(after_cap->refinement, 0u);
  in_view = false;
  EXPECT_EQ(source.poll().pose->refinement, 1u);
  // A new pose is not asked about: its first frame is a new picture anyway.
  asked.clear();
  pose.id = 6;
  source.submit(pose);
  EXPECT_EQ(source.poll().pose->id, 6u);
  EXPECT_TRUE(asked.empty());
  source.set_motion_check({});  // nothing moves: refined as before
  EXPECT_EQ(source.poll().pose->refinement, 1u);
}

// ---- a live master with two workers (the Cornell box: a single-level scene, nothing animated) ----

TEST(LiveMotion, ClockIsPlayedPausedAndSeekedAndFramesNameTheirSceneTime) {
  LiveMaster m({"--max-samples", "1", "--time-scale", "0.5", "--scene-time", "3"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  d.send_text(pose_message(1, {278, 273, -800}).dump());
  const auto first = frame_of_pose(d, 1);
  ASSERT_TRUE(first) << m.log();
  EXPECT_GE(first->header["scene_time"].get<double>(), 3.0);
  EXPECT_LT(first->header["scene_time"].get<double>(), 3.0 + 0.5 * 30);

  d.send_text(R"({"type":"clock","playing":false,"time":1.25})");
  const auto clock = next_text(d, "clock");
  ASSERT_TRUE(clock) << m.log();
  EXPECT_EQ((*clock)["playing"], false);
  EXPECT_EQ((*clock)["time"], 1.25);
  EXPECT_EQ((*clock)["scale"], 0.5);
  EXPECT_EQ((*clock)["animated"], false);
  // The held pose renders afresh at the new instant.
  std::optional<FrameMessage> frame;
  while ((frame = next_frame(d, 10s)) && frame->header["scene_time"] != 1.25) {
  }
  ASSERT_TRUE(frame) << m.log();
  const auto status = next_text(d, "status");
  ASSERT_TRUE(status) << m.log();
  EXPECT_EQ((*status)["clock"]["time"], 1.25);
  EXPECT_EQ((*status)["clock"]["playing"], false);
  EXPECT_EQ((*status)["moved"], json::array());
}

TEST(LiveMotion, BadClockAndMovesAreOneEventEachAndTheSessionGoesOn) {
  LiveMaster m({"--max-samples", "1"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  d.send_text(pose_message(1, {278, 273, -800}).dump());
  ASSERT_TRUE(frame_of_pose(d, 1)) << m.log();
  for (const char* bad : {R"({"type":"clock","time":null})", R"({"type":"move","instance":0,"transform":[1,0,0,0, 0,1,0,0, 0,0,1,0]})",
                          R"({"type":"move","instance":0,"transform":[1,0,0,0, 0,null,0,0, 0,0,1,0]})"}) {
    SCOPED_TRACE(bad);
    d.send_text(bad);
    std::optional<json> event;
    while ((event = next_text(d, "event", 10s)) && (*event)["text"].get<std::string>().find("refused") == std::string::npos) {
    }
    ASSERT_TRUE(event) << m.log();
    const std::string text = (*event)["text"];
    EXPECT_TRUE(text.rfind("clock refused", 0) == 0 || text.rfind("move refused", 0) == 0) << text;
  }
  // A single-level scene has no instance to pick: the answer names none.
  d.send_text(R"({"type":"pick","id":4,"origin":[278,273,-800],"direction":[0,0,1]})");
  const auto picked = next_text(d, "picked");
  ASSERT_TRUE(picked) << m.log();
  EXPECT_EQ((*picked)["id"], 4);
  EXPECT_TRUE((*picked)["instance"].is_null());
  // The session goes on, with nothing more refused.
  d.send_text(pose_message(2, {300, 273, -800}).dump());
  const auto after = frame_of_pose_noting_refusals(d, 2);
  EXPECT_TRUE(after.framed) << m.log();
  EXPECT_FALSE(after.more_refused);
  EXPECT_FALSE(m.master->wait(0ms).has_value());
}

// ---- the two cubes (instanced, one sliding): workers on --device null, which loads instanced scenes
// and answers every tile with a fixed image, so what is tested is the master's side ----

TEST(LiveMotion, APickedInstanceIsMovedAndEveryWorkerRendersTheNextFramesWithIt) {
  testing::TempDir scenes("live_cubes");
  LiveMaster m({"--max-samples", "1", "--time-scale", "0"}, {"--device", "null"}, false, {}, testing::pack_two_cubes(scenes.path()));
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  d.send_text(pose_message(1, {0, 0, 10}).dump());
  ASSERT_TRUE(frame_of_pose(d, 1)) << m.log();
  // Straight down onto the sliding cube (x = 3 at time 0).
  d.send_text(R"({"type":"pick","id":1,"origin":[3,10,0],"direction":[0,-1,0]})");
  const auto picked = next_text(d, "picked");
  ASSERT_TRUE(picked) << m.log();
  EXPECT_EQ((*picked)["instance"], 1);
  EXPECT_NEAR((*picked)["distance"].get<double>(), 9.5, 1e-3);
  EXPECT_EQ((*picked)["transform"], json({1, 0, 0, 3, 0, 1, 0, 0, 0, 0, 1, 0}));
  d.send_text(R"({"type":"move","instance":1,"transform":[1,0,0,3, 0,1,0,2, 0,0,1,0]})");
  // The status names it; the frames after it were rendered by workers that took it (a worker refuses
  // a bad one as BAD_REQUEST: the frame would be skipped).
  std::optional<json> status;
  while ((status = next_text(d, "status", 10s)) && (*status)["moved"].empty()) {
  }
  ASSERT_TRUE(status) << m.log();
  EXPECT_EQ((*status)["moved"], json::parse(R"([{"instance":1,"transform":[1,0,0,3,0,1,0,2,0,0,1,0]}])"));
  d.send_text(pose_message(2, {0, 0, 11}).dump());
  ASSERT_TRUE(frame_of_pose(d, 2)) << m.log();
  // Picked again where it was put: 2 up.
  d.send_text(R"({"type":"pick","id":2,"origin":[3,10,0],"direction":[0,-1,0]})");
  const auto again = next_text(d, "picked");
  ASSERT_TRUE(again) << m.log();
  EXPECT_EQ((*again)["instance"], 1);
  EXPECT_NEAR((*again)["distance"].get<double>(), 7.5, 1e-3);
  // A flat one and an instance the scene lacks: one event each, the cube stays where it was put.
  for (const char* bad : {R"({"type":"move","instance":1,"transform":[1,0,0,3, 0,0,0,2, 0,0,1,0]})",
                          R"({"type":"move","instance":2,"transform":[1,0,0,3, 0,1,0,2, 0,0,1,0]})"}) {
    SCOPED_TRACE(bad);
    d.send_text(bad);
    std::optional<json> event;
    while ((event = next_text(d, "event", 10s)) && (*event)["text"].get<std::string>().find("refused") == std::string::npos) {
    }
    ASSERT_TRUE(event) << m.log();
    EXPECT_TRUE((*event)["text"] == "move refused: instance 1: transform has scale 0 (the object would be flat)" ||
                (*event)["text"] == "move refused: instance 2: the scene has 2 instances")
        << (*event)["text"];
  }
  status = next_text(d, "status");
  ASSERT_TRUE(status) << m.log();
  EXPECT_EQ((*status)["moved"][0]["transform"][7], 2);
  // Let go: back to its animation.
  d.send_text(R"({"type":"move","instance":1,"transform":null})");
  while ((status = next_text(d, "status", 10s)) && !(*status)["moved"].empty()) {
  }
  ASSERT_TRUE(status) << m.log();
  d.send_text(pose_message(3, {0, 0, 12}).dump());
  ASSERT_TRUE(frame_of_pose(d, 3)) << m.log();
  EXPECT_EQ(m.log().find(" refused it: "), std::string::npos) << m.log();  // no worker refused a frame
  EXPECT_FALSE(m.master->wait(0ms).has_value());
}

// A held view while the clock plays: the sliding cube behind the camera leaves its refinement going
// (its jittered samples rise to the cap, every frame at the instant of the first: path tracing's
// accumulation goes on the same way, the workers keeping it while the instant stays), the same slide
// in view restarts it every frame.
// With the clock playing, a held view away from the sliding cube refines to its most samples at one
// scene time; a view of it takes a fresh first sample every frame. `mode` limits refinement to 8.
void expect_held_view_refines_only_while_nothing_in_view_moves(const std::vector<std::string>& mode) {
  testing::TempDir scenes("live_cubes_refine");
  LiveMaster m(mode, {"--device", "host", "--threads", "1"}, false, {}, testing::pack_two_cubes(scenes.path()));
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  // Frames until none came for 2.5 s (or 20 s passed): the most samples, the scene times, the count.
  struct Seen {
    uint32_t most = 0;
    std::set<double> times;
    size_t frames = 0;
  };
  const auto frames_until_quiet = [&](uint64_t pose, std::chrono::milliseconds quiet, std::chrono::seconds limit) {
    Seen seen;
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      const auto f = next_frame(d, quiet);
      if (!f) break;
      if (f->header["pose_id"] != pose) continue;
      seen.most = std::max(seen.most, f->header["samples"].get<uint32_t>());
      seen.times.insert(f->header["scene_time"].get<double>());
      ++seen.frames;
    }
    return seen;
  };
  d.send_text(pose_message(1, {0, 0, 10}).dump());  // looking down +z, away from both cubes
  ASSERT_TRUE(frame_of_pose(d, 1)) << m.log();
  const Seen away = frames_until_quiet(1, 2500ms, 20s);
  EXPECT_EQ(away.most, 8u) << m.log();
  EXPECT_EQ(away.times.size(), 1u) << "the refinements left the first frame's instant";
  d.send_text(pose_message(2, {0, 0, -10}).dump());  // looking at them: the slide is in view
  ASSERT_TRUE(frame_of_pose(d, 2)) << m.log();
  const Seen facing = frames_until_quiet(2, 2500ms, 3s);
  EXPECT_GE(facing.frames, 3u) << m.log();
  EXPECT_EQ(facing.most, 1u) << "samples of different instants were averaged";
  EXPECT_GE(facing.times.size(), facing.frames - 1);
}

TEST(LiveMotion, AHeldViewRefinesWhileOnlyThingsOutOfViewMove) {
  expect_held_view_refines_only_while_nothing_in_view_moves({"--mode", "raytrace", "--max-samples", "8"});
}

// The path tracer's accumulation: it restarts only when something in view moved.
TEST(LiveMotion, PathTracedHeldViewRefinesWhileOnlyThingsOutOfViewMove) {
  expect_held_view_refines_only_while_nothing_in_view_moves({"--mode", "pathtrace", "--spp", "1", "--max-path-samples", "8"});
}

}  // namespace
}  // namespace tessera
