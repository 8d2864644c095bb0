// The live session (tessera-master --serve) end to end over real sockets: a master with two
// local workers on the host device, driven by LiveClient the way a page drives it; plus the
// live pieces on their own (message parsing, the pose source's never-stale rule, frame layout).
#include <gtest/gtest.h>

#include <csignal>

#include <thread>

#include <cmath>
#include <nlohmann/json.hpp>

#include "cluster_test_support.h"
#include "live_test_support.h"
#include "common/base/error.h"
#include "common/image/metrics.h"
#include "master/live/access_token.h"
#include "master/live/client_messages.h"
#include "master/live/frame_message.h"
#include "master/live/jpeg_bands.h"
#include "master/live/jpeg_codec.h"
#include "master/live/live_client.h"
#include "master/live/live_pose_source.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;
using namespace master::live;
using nlohmann::json;
using testing::Process;
using testing::TempDir;
using testing::WorkerProcess;
using namespace testing::live;

// ---- pieces ----

TEST(LivePieces, TokenAndQuery) {
  EXPECT_EQ(query_parameter("/ws?token=abc&x=1", "token"), "abc");
  EXPECT_EQ(query_parameter("/ws?x=1&token=abc", "token"), "abc");
  EXPECT_EQ(query_parameter("/ws?tokens=abc", "token"), std::nullopt);
  EXPECT_EQ(query_parameter("/ws", "token"), std::nullopt);
  EXPECT_EQ(target_path("/index.html?token=1"), "/index.html");
  EXPECT_TRUE(token_matches(kToken, std::string(kToken)));
  EXPECT_FALSE(token_matches(kToken, std::string("0123456789abcdef0123456789abcdee")));
  EXPECT_FALSE(token_matches(kToken, std::nullopt));
  EXPECT_FALSE(token_matches(kToken, std::string("")));
  EXPECT_EQ(random_token().size(), 32u);
  EXPECT_NE(random_token(), random_token());
}

TEST(LivePieces, ClientMessagesAreChecked) {
  const auto pose = std::get<PoseUpdate>(parse_client_message(
      R"({"type":"pose","id":7,"t":12.5,"position":[1,2,3],"orientation":[1,0,0,0],"gaze":[0.5,0.25],
          "views":[{"position":[0,0,0],"orientation":[1,0,0,0],"frustum":[-1,1,-0.5,0.5]}]})"));
  EXPECT_EQ(pose.pose.id, 7u);
  EXPECT_DOUBLE_EQ(pose.pose.client_time_ms, 12.5);
  EXPECT_EQ(pose.pose.pose.position[2], 3.0f);
  ASSERT_EQ(pose.pose.views.size(), 1u);
  EXPECT_EQ(pose.pose.views[0].frustum.bottom, -0.5f);
  const auto settings = std::get<SettingsChange>(parse_client_message(R"({"type":"settings","mode":"vct","size":[320,200]})"));
  EXPECT_EQ(*settings.mode, "vct");
  EXPECT_EQ((*settings.size)[1], 200u);
  for (const char* bad : {"garbage", "[1,2]", R"({"type":"nope"})", R"({"id":1})",
                          R"({"type":"pose","id":1,"t":0,"position":[1,2],"orientation":[1,0,0,0]})",
                          R"({"type":"pose","id":1,"t":0,"position":[1,2,3],"orientation":[2,0,0,0]})",
                          R"({"type":"pose","id":1,"t":0,"position":[1,2,"x"],"orientation":[1,0,0,0]})",
                          R"({"type":"pose","id":1,"t":0,"position":[1,2,3],"orientation":[1,0,0,0],"views":[{},{},{}]})",
                          R"({"type":"pose","id":1,"t":0,"position":[1,2,3],"orientation":[1,0,0,0],
                              "views":[{"position":[0,0,0],"orientation":[1,0,0,0],"frustum":[1,-1,-1,1]}]})",
                          R"({"type":"displayed","frame":"x","pose_id":1,"t":0})", R"({"type":"hello","want":"own"})"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_client_message(bad), ProtocolError);
  }
  // settings the master cannot use are refused by the session, the connection kept
  for (const char* refused : {R"({"type":"settings","mode":"raster"})", R"({"type":"settings","tile":3})",
                              R"({"type":"settings","size":[7,5]})"}) {
    SCOPED_TRACE(refused);
    const ClientMessage m = parse_client_message(refused);
    ASSERT_TRUE(std::holds_alternative<RefusedSettings>(m));
    EXPECT_FALSE(std::get<RefusedSettings>(m).reason.empty());
  }
}

TEST(LivePieces, PoseSourceNeverRepeatsAndRefinesUpToTheLimit) {
  LivePoseSource source;
  int wakes = 0;
  source.set_wake([&] { ++wakes; });
  source.set_refinement(3, true);
  EXPECT_FALSE(source.poll().pose);  // nothing yet: no frame
  EXPECT_FALSE(source.poll().ended);
  master::PoseSample a, b;
  a.id = 1;
  b.id = 2;
  source.submit(a);
  source.submit(b);  // replaces a: poses are never queued
  EXPECT_TRUE(source.newer_pose_waiting());
  auto first = source.poll().pose;
  ASSERT_TRUE(first);
  EXPECT_EQ(first->id, 2u);
  EXPECT_EQ(first->refinement, 0u);
  EXPECT_EQ(first->aa_sample, 0u);
  for (uint32_t k = 1; k < 3; ++k) {
    auto refined = source.poll().pose;
    ASSERT_TRUE(refined);
    EXPECT_EQ(refined->id, 2u);
    EXPECT_EQ(refined->refinement, k);
    EXPECT_EQ(refined->aa_sample, k);
  }
  EXPECT_FALSE(source.poll().pose);  // at the limit: nothing more for this pose
  EXPECT_GE(wakes, 2);
  source.close();
  EXPECT_TRUE(source.poll().ended);
}

TEST(LivePieces, FrameMessageLayout) {
  const ImageRgba8 image(16, 8, {200, 100, 50, 255});
  JpegEncoder encoder(95);
  const std::string message =
      pack_frame_message({{"type", "frame"}, {"frame", 3}, {"width", 16}, {"height", 8}, {"eyes", 1}}, {{0, 8, encoder.encode(image)}});
  const uint32_t length = uint8_t(message[0]) | uint8_t(message[1]) << 8 | uint8_t(message[2]) << 16 | uint8_t(message[3]) << 24;
  EXPECT_EQ(json::parse(message.substr(4, length))["frame"], 3);
  const FrameMessage frame = unpack_frame_message(message);
  ASSERT_EQ(frame.bands.size(), 1u);
  const ImageRgba8 decoded = decode_jpeg(frame.bands[0].jpeg);
  ASSERT_EQ(decoded.width(), 16);
  EXPECT_NEAR(decoded.at(5, 5).r, 200, 3);
  EXPECT_THROW(unpack_frame_message(std::string("\xff\xff\xff\x7f{}", 6)), Error);
  EXPECT_THROW(decode_jpeg("not a jpeg"), Error);
}

// ---- a live master with two workers (live_test_support.h) ----

TEST(LiveSession, PageAndSocketNeedTheToken) {
  LiveMaster m;
  ASSERT_NE(m.port, 0) << m.log();
  EXPECT_EQ(https_get("127.0.0.1", m.port, "/", 10s).status, 403);
  EXPECT_EQ(https_get("127.0.0.1", m.port, "/?token=0123456789abcdef0123456789abcdee", 10s).status, 403);
  const HttpReply page = https_get("127.0.0.1", m.port, std::string("/?token=") + kToken, 10s);
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("<html"), std::string::npos);
  EXPECT_NE(page.content_type.find("text/html"), std::string::npos);
  EXPECT_EQ(https_get("127.0.0.1", m.port, "/no-such-file.js", 10s).status, 404);
  for (const std::string target : {"/ws", "/ws?token=", "/ws?token=0123456789abcdef0123456789abcdee"}) {
    SCOPED_TRACE(target);
    try {
      m.connect(target);
      ADD_FAILURE() << "the WebSocket was accepted";
    } catch (const UpgradeRefused& e) {
      EXPECT_EQ(e.status, 403);
    }
  }
  LiveClient ok = m.connect();
  ok.send_text(R"({"type":"hello","want":"watch"})");
  const auto session = next_text(ok, "session");
  ASSERT_TRUE(session) << m.log();
  EXPECT_EQ((*session)["role"], "watch");
  EXPECT_EQ((*session)["size"], json({64, 48}));
  EXPECT_NE(m.log().find("SHA-256 fingerprint"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(m.dir / "config/tessera/live-cert.pem"));
}

TEST(LiveSession, ForeignOriginRefused) {
  LiveMaster m;
  ASSERT_NE(m.port, 0) << m.log();
  try {
    m.connect(std::string("/ws?token=") + kToken, "https://evil.example");
    ADD_FAILURE() << "a foreign origin was accepted";
  } catch (const UpgradeRefused& e) {
    EXPECT_EQ(e.status, 403);
  }
  EXPECT_NO_THROW(m.connect(std::string("/ws?token=") + kToken, "https://127.0.0.1:" + std::to_string(m.port)));
}

TEST(LiveSession, BadMessagesCloseOnlyThatConnection) {
  LiveMaster m;
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  d.send_text(pose_message(1, {278, 273, -800}).dump());
  ASSERT_TRUE(frame_of_pose(d, 1)) << m.log();
  struct Case {
    std::string name;
    std::function<void(LiveClient&)> send;
    int code;
  };
  const std::vector<Case> cases = {
      {"garbage", [](LiveClient& c) { c.send_text("{not json"); }, 1008},
      {"oversized", [](LiveClient& c) { c.send_text(std::string(70 * 1024, ' ')); }, 1009},
      {"binary", [](LiveClient& c) { c.send_binary("\x01\x02\x03"); }, 1008},
      {"unknown type", [](LiveClient& c) { c.send_text(R"({"type":"hello","want":"watch"})"); c.send_text(R"({"type":"reboot"})"); }, 1008},
      {"no hello", [](LiveClient& c) { c.send_text(pose_message(5, {0, 0, 0}).dump()); }, 1008},
  };
  for (const auto& bad : cases) {
    SCOPED_TRACE(bad.name);
    LiveClient c = m.connect();
    bad.send(c);
    int code = 0;
    try {
      for (int i = 0; i < 200; ++i) c.receive(100ms);
    } catch (const ConnectionClosed& e) {
      code = e.code;
    }
    EXPECT_EQ(code, bad.code) << m.log();
  }
  // The session goes on: the driver's next pose still gets its frame.
  d.send_text(pose_message(2, {300, 273, -800}).dump());
  const auto frame = frame_of_pose(d, 2);
  ASSERT_TRUE(frame) << m.log();
  EXPECT_EQ(frame->header["samples"], 1);
  EXPECT_FALSE(m.master->wait(0ms).has_value());
  const std::string log = m.log();
  EXPECT_NE(log.find("not JSON"), std::string::npos);
  EXPECT_NE(log.find("message over 64 KiB"), std::string::npos);
  EXPECT_NE(log.find("binary messages are not accepted"), std::string::npos);
}

// A setting out of range (typed into the page's form) is refused with an event and the settings still
// in force; the driving page stays connected and drives on.
TEST(LiveSession, SettingsOutOfRangeAreRefusedNotDisconnected) {
  LiveMaster m;
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  for (const json& settings : {json{{"type", "settings"}, {"size", {7, 5}}}, json{{"type", "settings"}, {"tile", 2000}},
                               json{{"type", "settings"}, {"spp", 0}, {"mode", "pathtrace"}}}) {
    SCOPED_TRACE(settings.dump());
    d.send_text(settings.dump());
    std::optional<json> event;  // (workers' events come too)
    while ((event = next_text(d, "event")) && (*event)["text"].get<std::string>().find("settings refused") == std::string::npos) {
    }
    ASSERT_TRUE(event) << m.log();
    const auto session = next_text(d, "session");
    ASSERT_TRUE(session) << m.log();
    EXPECT_EQ((*session)["settings"]["mode"], "raytrace");  // nothing of the refused message applied
  }
  d.send_text(pose_message(1, {278, 273, -800}).dump());
  ASSERT_TRUE(frame_of_pose(d, 1)) << m.log();
}

// A size far too large for the workers (typed by mistake) does not hold the session: the next settings
// cancel the frame in flight, and the page is back at its small size at once.
TEST(LiveSession, NewSettingsCancelTheFramesInFlight) {
  LiveMaster m;
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  d.send_text(json{{"type", "settings"}, {"size", {8192, 8192}}}.dump());
  std::optional<json> session;
  while ((session = next_text(d, "session")) && (*session)["size"] != json({8192, 8192})) {
  }
  ASSERT_TRUE(session) << m.log();
  d.send_text(pose_message(1, {278, 273, -800}).dump());
  std::this_thread::sleep_for(500ms);  // the huge frame is on the workers now
  const auto asked = std::chrono::steady_clock::now();
  d.send_text(json{{"type", "settings"}, {"size", {64, 48}}}.dump());
  d.send_text(pose_message(2, {300, 273, -800}).dump());
  const auto frame = frame_of_pose(d, 2, 60s);
  ASSERT_TRUE(frame) << m.log();
  EXPECT_EQ(frame->header["width"], 64);
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 20s) << "the new settings waited for the huge frame";
}

TEST(LiveSession, NewPoseNewFrameHoldingStillRefinesToTheCapOnce) {
  LiveMaster m({"--max-samples", "4", "--jpeg-quality", "95"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  d.send_text(pose_message(1, {278, 273, -800}).dump());
  const auto first = frame_of_pose(d, 1);
  ASSERT_TRUE(first) << m.log();
  // 1, or more where a busy encoder already folded the next refinement in (the newest image wins).
  EXPECT_GE(first->header["samples"], 1);
  EXPECT_LE(first->header["samples"], 4);
  EXPECT_EQ(first->header["eyes"], 1);
  EXPECT_EQ(first->header["width"], 64);
  EXPECT_EQ(first->header["owners"].size(), 4u);  // 2 x 2 tiles of 32
  for (const auto& o : first->header["owners"]) EXPECT_TRUE(o == 0 || o == 1);
  // Holding still: the sample count rises with every frame up to the cap of 4 (a busy encoder may
  // fold two refinements into one frame, so a count may be skipped), then nothing more for this pose.
  uint32_t samples = first->header["samples"];
  std::optional<FrameMessage> last = first;
  while (samples < 4) {
    const auto f = next_frame(d, 30s);
    ASSERT_TRUE(f) << m.log();
    ASSERT_EQ(f->header["pose_id"], 1);
    const uint32_t now = f->header["samples"];
    EXPECT_GT(now, samples) << "a frame was sent without new samples";
    EXPECT_LE(now, 4u);
    samples = now;
    last = f;
  }
  EXPECT_FALSE(next_frame(d, 1500ms)) << "a frame was sent again for a pose at its sample cap";
  // A new pose: a new frame, from 1 sample, showing another view.
  d.send_text(pose_message(2, {150, 273, -800}).dump());
  const auto moved = frame_of_pose(d, 2);
  ASSERT_TRUE(moved) << m.log();
  EXPECT_LT(moved->header["samples"], 4) << "a new pose starts its samples again";
  EXPECT_NE(decode_frame(*moved), decode_frame(*first));
}

// Path tracing a held view stops at --max-path-samples, also when spp changes on the way: the workers
// keep the view's accumulation, so the cap follows the samples the frames report, not a frame count.
TEST(LiveSession, PathtraceHeldViewStopsAtItsSampleCapAcrossSettings) {
  LiveMaster m({"--mode", "pathtrace", "--spp", "4", "--max-path-samples", "16"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  d.send_text(pose_message(1, {278, 273, -800}).dump());
  ASSERT_TRUE(frame_of_pose(d, 1)) << m.log();
  const auto samples_until_quiet = [&] {
    uint32_t most = 0;
    while (const auto f = next_frame(d, 2500ms)) most = std::max(most, f->header["samples"].get<uint32_t>());
    return most;
  };
  EXPECT_EQ(samples_until_quiet(), 16u) << m.log();
  d.send_text(json{{"type", "settings"}, {"spp", 2}}.dump());
  const uint32_t after = samples_until_quiet();
  EXPECT_LE(after, 16u + 2u * 2u) << "refined far past the cap after a settings change";
}

// A frame taller than two bands' minimum goes out as bands encoded in parallel: the message's band
// table tiles the frame and the bands decode, in parallel, into the whole view.
TEST(LiveSession, TallFramesGoOutAsBands) {
  LiveMaster m({"--max-samples", "1", "--jpeg-threads", "4"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  d.send_text(json{{"type", "settings"}, {"size", {64, 400}}}.dump());
  std::optional<json> session;
  while ((session = next_text(d, "session")) && (*session)["size"] != json({64, 400})) {
  }
  ASSERT_TRUE(session) << m.log();
  d.send_text(pose_message(1, {278, 273, -800}).dump());
  const auto frame = frame_of_pose(d, 1);
  ASSERT_TRUE(frame) << m.log();
  ASSERT_EQ(frame->header["height"], 400);
  EXPECT_EQ(frame->header["format"], 2);
  ASSERT_EQ(frame->bands.size(), 3u);  // 400 rows, up to 4 threads: bands of 128, 128 and 144 rows
  EXPECT_EQ(frame->bands[1].y, 128);
  EXPECT_EQ(frame->bands[2].height, 144);
  const ImageRgba8 image = decode_frame(*frame);
  ASSERT_EQ(image.width(), 64);
  ASSERT_EQ(image.height(), 400);
  EXPECT_GT(mse_rgb(image, ImageRgba8(64, 400, {0, 0, 0, 255})), 10.0) << "a black frame";
  for (const auto& band : frame->bands) EXPECT_EQ(decode_jpeg(band.jpeg).height(), band.height);
}

// The XR path: two eye views with their own poses and off-axis frusta switch the session to stereo,
// and holding still the jittered samples converge to tessera-render's --aa image of those eyes.
TEST(LiveSession, XrEyesHeldStillConvergeToTheJitteredRender) {
  LiveMaster m({"--max-samples", "4", "--jpeg-quality", "100"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  const std::string left = "268,273,-800,0,0,1,0,-0.62,0.5,-0.41,0.45", right = "288,273,-800,0,0,1,0,-0.5,0.62,-0.41,0.45";
  json pose = pose_message(1, {278, 273, -800});
  pose["views"] = {{{"position", {268, 273, -800}}, {"orientation", {0, 0, 1, 0}}, {"frustum", {-0.62, 0.5, -0.41, 0.45}}},
                   {{"position", {288, 273, -800}}, {"orientation", {0, 0, 1, 0}}, {"frustum", {-0.5, 0.62, -0.41, 0.45}}}};
  d.send_text(pose.dump());
  std::optional<FrameMessage> last;
  try {
    for (int i = 0; i < 20 && (!last || last->header["samples"] != 4); ++i) {
      last = next_frame(d, 30s);
      ASSERT_TRUE(last) << m.log();
    }
  } catch (const std::exception& e) {
    FAIL() << e.what() << "\n" << m.log();
  }
  ASSERT_EQ(last->header["samples"], 4);
  EXPECT_EQ(last->header["eyes"], 2);
  const ImageRgba8 live = decode_frame(*last);
  ASSERT_EQ(live.width(), 128);
  const auto r = testing::run_command(testing::render_binary().string() + " " + testing::cornell_tpk().string() + " --eye-view " + left +
                             " --eye-view " + right + " --aa 4 --size 64x48 --device host -o " + (m.dir / "ref.png").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const ImageRgba8 reference = read_image(m.dir / "ref.png");
  const ImageRgba8 centres = [&] {
    const auto c = testing::run_command(testing::render_binary().string() + " " + testing::cornell_tpk().string() + " --eye-view " + left +
                               " --eye-view " + right + " --size 64x48 --device host -o " + (m.dir / "centres.png").string());
    EXPECT_EQ(c.exit_code, 0) << c.output;
    return read_image(m.dir / "centres.png");
  }();
  // JPEG (quality 100, 4:2:0 chroma) is all that separates the two; the 1-sample image is further.
  const double psnr = psnr_rgb(live, reference);
  EXPECT_GT(psnr, 32.0);
  EXPECT_GT(psnr, psnr_rgb(live, centres));
}

// A listed worker that never answers (frozen, or an address that is no worker) holds a live session's
// start for a few seconds, not the whole --startup-timeout: someone is looking at the page. It joins
// when it answers.
TEST(LiveSession, AWorkerThatNeverAnswersDelaysTheStartBySecondsNotTheStartupTimeout) {
  const auto started = std::chrono::steady_clock::now();
  LiveMaster m({}, {"--device", "host", "--threads", "1"}, true);
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  d.send_text(pose_message(1, {278, 273, -800}).dump());
  ASSERT_TRUE(frame_of_pose(d, 1, 30s)) << m.log();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 15s) << m.log();
  m.b->process().signal(SIGCONT);
}

// A worker that freezes (SIGSTOP: no tiles, no heartbeats, its connection still open) holds no frame
// for the 5 s until it would be dropped: after a second of silence the other worker renders copies of
// its tiles, and frames keep following the poses.
TEST(LiveSession, FrozenWorkerHoldsFramesForASecondNotUntilItIsDropped) {
  for (const char* mode : {"raytrace", "pathtrace"}) {  // path-traced tiles restart their samples where they go
    SCOPED_TRACE(mode);
    LiveMaster m({"--mode", mode});
    ASSERT_NE(m.port, 0) << m.log();
    LiveClient d = driver(m);
    d.send_text(pose_message(1, {278, 273, -800}).dump());
    ASSERT_TRUE(frame_of_pose(d, 1)) << m.log();
    m.b->process().signal(SIGSTOP);
    const auto frozen = std::chrono::steady_clock::now();
    for (uint64_t id = 2; id < 5; ++id) {
      d.send_text(pose_message(id, {278.0f + float(id) * 10, 273, -800}).dump());
      ASSERT_TRUE(frame_of_pose(d, id, 10s)) << "no frame for pose " << id << "\n" << m.log();
    }
    const auto took = std::chrono::steady_clock::now() - frozen;
    m.b->process().signal(SIGCONT);
    EXPECT_LT(took, 3500ms) << "the frames waited for the frozen worker";
  }
}

TEST(LiveSession, WorkerKilledMidSessionFramesKeepComing) {
  LiveMaster m({}, {"--device", "host", "--threads", "1", "--slowdown-ms", "20"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  d.send_text(pose_message(1, {278, 273, -800}).dump());
  ASSERT_TRUE(frame_of_pose(d, 1)) << m.log();
  m.a->process().signal(SIGKILL);
  bool lost_event = false;
  for (uint64_t id = 2; id < 6; ++id) {
    d.send_text(pose_message(id, {278.0f + float(id) * 10, 273, -800}).dump());
    const auto end = std::chrono::steady_clock::now() + 30s;
    bool got = false;
    while (!got && std::chrono::steady_clock::now() < end) {
      auto msg = d.receive(1s);
      if (!msg) continue;
      if (msg->binary) {
        got = unpack_frame_message(msg->data).header["pose_id"] == id;
      } else if (json::parse(msg->data)["type"] == "event") {
        lost_event = lost_event || json::parse(msg->data)["text"].get<std::string>().find("lost worker") != std::string::npos;
      }
    }
    ASSERT_TRUE(got) << "no frame for pose " << id << "\n" << m.log();
  }
  EXPECT_TRUE(lost_event);
}

// A live session outlives its workers: with every worker gone past --no-worker-timeout the master
// drops its open frames but keeps serving the page, and renders again once a worker is back where it
// was (a phone that rebooted).
TEST(LiveSession, OutlivesItsWorkersAndRendersWhenOneIsBack) {
  LiveMaster m({"--no-worker-timeout", "1"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  d.send_text(pose_message(1, {278, 273, -800}).dump());
  ASSERT_TRUE(frame_of_pose(d, 1)) << m.log();
  const std::string a_address = m.a->address();
  m.a->process().signal(SIGKILL);
  m.b->process().signal(SIGKILL);
  m.a->process().wait(5s);
  m.b->process().wait(5s);
  d.send_text(pose_message(2, {300, 273, -800}).dump());
  std::this_thread::sleep_for(3s);  // past --no-worker-timeout: a run would have ended here
  ASSERT_FALSE(m.master->wait(0ms)) << "the live master ended without workers\n" << m.log();
  EXPECT_NE(m.log().find("the session goes on"), std::string::npos) << m.log();
  tessera::testing::Process back(std::vector<std::string>{tessera::testing::worker_binary().string(), "--listen", a_address, "--scenes", m.scenes.string(), "--secret-file", m.secret.string(),
                "--name", "a-again", "--device", "host", "--threads", "1"},
               m.dir / "a-again.log");
  d.send_text(pose_message(3, {320, 273, -800}).dump());
  EXPECT_TRUE(frame_of_pose(d, 3, 60s)) << m.log() << "\n" << back.log();
}

// The page switches the render mode live: each mode renders with the parameters the command line
// gave it (pathtrace's --spp and vct's --vct-grid, given while starting in raytrace), no worker is
// dropped and the held pose comes back in every mode.
TEST(LiveSession, ModeSwitchesRenderEachModeWithItsCommandLineParameters) {
  LiveMaster m({"--spp", "2", "--vct-grid", "64", "--max-path-samples", "4"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  d.send_text(pose_message(1, {278, 273, -800}).dump());
  const auto first = frame_of_pose(d, 1);
  ASSERT_TRUE(first) << m.log();
  EXPECT_EQ(first->header["mode"], "raytrace");
  for (const std::string mode : {"pathtrace", "vct", "raytrace"}) {
    SCOPED_TRACE(mode);
    d.send_text(json{{"type", "settings"}, {"mode", mode}}.dump());
    std::optional<json> session;
    while ((session = next_text(d, "session")) && (*session)["settings"]["mode"] != mode) {
    }
    ASSERT_TRUE(session) << m.log();
    if (mode == "pathtrace") {
      EXPECT_EQ((*session)["settings"]["spp"], 2);
    }
    std::optional<FrameMessage> frame;
    while ((frame = next_frame(d, 60s)) && frame->header["mode"] != mode) {
    }
    ASSERT_TRUE(frame) << m.log();
    EXPECT_EQ(frame->header["pose_id"], 1);
    EXPECT_GE(frame->header["samples"].get<int>(), 1);
    const ImageRgba8 image = decode_frame(*frame);
    EXPECT_EQ(image.width(), 64);
    EXPECT_GT(mse_rgb(image, ImageRgba8(64, 48, {0, 0, 0, 255})), 10.0) << "a black frame";
  }
  EXPECT_FALSE(m.master->wait(0ms).has_value()) << m.log();
  const std::string log = m.log();
  EXPECT_EQ(log.find("lost "), std::string::npos) << log;
  EXPECT_EQ(log.find("refused"), std::string::npos) << log;
}

// A page that comes while the pose holds sees the view at once, and every frame names the pose it
// shows, so a watcher's camera follows the driver's.
TEST(LiveSession, LatePageGetsTheNewestFrameWithItsPose) {
  LiveMaster m({"--max-samples", "2"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  d.send_text(pose_message(1, {250, 260, -700}).dump());
  std::optional<FrameMessage> last;
  while (auto f = next_frame(d, 3s)) last = f;  // the pose's refinements, up to the cap
  ASSERT_TRUE(last) << m.log();
  EXPECT_EQ(last->header["samples"], 2);
  EXPECT_EQ(last->header["position"], json({250, 260, -700}));
  EXPECT_EQ(last->header["orientation"], json({0, 0, 1, 0}));
  LiveClient w = m.connect();
  w.send_text(R"({"type":"hello","want":"watch","client":"phone"})");
  const auto session = next_text(w, "session");
  ASSERT_TRUE(session) << m.log();
  EXPECT_EQ((*session)["role"], "watch");
  EXPECT_GT((*session)["scene"]["units_per_meter"].get<double>(), 0.0);
  const auto shown = next_frame(w, 5s);
  ASSERT_TRUE(shown) << "a watcher that came while the pose holds got no frame\n" << m.log();
  EXPECT_EQ(shown->header["frame"], last->header["frame"]);
  EXPECT_EQ(shown->header["position"], json({250, 260, -700}));
  EXPECT_EQ(shown->bands, last->bands);
}

TEST(LiveSession, DisplayedLatencyReachesTheStatistics) {
  TempDir out("live_stats");
  LiveMaster m({"--stats", (out / "stats.json").string(), "--max-samples", "1"});
  ASSERT_NE(m.port, 0) << m.log();
  {
    LiveClient d = driver(m);
    for (uint64_t id = 1; id <= 3; ++id) {
      json pose = pose_message(id, {278.0f + float(id), 273, -800});
      pose["t"] = 1000.0 * double(id);
      d.send_text(pose.dump());
      const auto f = frame_of_pose(d, id);
      ASSERT_TRUE(f) << m.log();
      // Received 30 ms after the pose, decoded 6 ms later, drawn 4 ms after that.
      const double t = 1000.0 * double(id);
      d.send_text(json{{"type", "displayed"}, {"frame", f->header["frame"]}, {"pose_id", id}, {"received", t + 30}, {"decoded", t + 36},
                       {"t", t + 40}}
                      .dump());
    }
    const auto status = next_text(d, "status", 5s);
    ASSERT_TRUE(status);
    EXPECT_EQ((*status)["workers"].size(), 2u);
    EXPECT_NEAR((*status)["latency_ms"]["median"].get<double>(), 40.0, 1e-6);
    EXPECT_NEAR((*status)["page_ms"]["decode"].get<double>(), 6.0, 1e-6);
    EXPECT_NEAR((*status)["page_ms"]["draw"].get<double>(), 4.0, 1e-6);
    EXPECT_GE((*status)["page_ms"]["network"].get<double>(), 0.0);
  }
  m.master->signal(SIGINT);
  ASSERT_TRUE(m.master->wait(20s).has_value()) << m.log();
  const json stats = json::parse(read_file_text(out / "stats.json"));
  EXPECT_EQ(stats["summary"]["page_latency_count"], 3);
  EXPECT_NEAR(stats["summary"]["page_latency_median_ms"].get<double>(), 40.0, 1e-6);
  for (const auto& f : stats["frames"]) {
    EXPECT_TRUE(f["live"]["fresh"].get<bool>());
    EXPECT_GE(f["live"]["encode_ms"].get<double>(), 0.0);
    EXPECT_NEAR(f["live"]["page_decode_ms"].get<double>(), 6.0, 1e-6);
    EXPECT_NEAR(f["live"]["page_draw_ms"].get<double>(), 4.0, 1e-6);
    // Frame queued -> report in on the master's clock, less the page's 10 ms: not negative, not the whole wait.
    EXPECT_GE(f["live"]["page_network_ms"].get<double>(), 0.0);
    EXPECT_LT(f["live"]["page_network_ms"].get<double>(), 5000.0);
  }
  const json& stages = stats["summary"]["live_stage_medians_ms"];
  ASSERT_TRUE(stages.is_object()) << stats["summary"].dump();
  EXPECT_NEAR(stages["decode"].get<double>(), 6.0, 1e-6);
  EXPECT_NEAR(stages["draw"].get<double>(), 4.0, 1e-6);
  EXPECT_GT(stages["encode"].get<double>(), 0.0);
  EXPECT_NE(m.log().find("live stages, medians over new poses"), std::string::npos) << m.log();
}

// A pose source that a person drives renders each pose once: no frames repeat an old pose.
TEST(LiveSession, UdpPosesAreRenderedOnceEach) {
  TempDir dir("live_udp");
  const auto secret = dir / "secret";
  testing::write_secret(secret, testing::kClusterSecret);
  std::filesystem::create_directories(dir / "scenes");
  WorkerProcess a(dir.path(), "a", dir / "scenes", secret);
  ASSERT_FALSE(a.address().empty());
  const int probe = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t length = sizeof addr;
  ::getsockname(probe, reinterpret_cast<sockaddr*>(&addr), &length);
  ::close(probe);
  Process master({testing::master_binary().string(), "--workers", a.address(), "--scene", testing::cornell_tpk().string(), "--secret-file",
                  secret.string(), "--no-status", "--size", "32x32", "--tile", "32", "--poses",
                  "udp://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)), "--udp-timeout", "2", "--frames", "20", "--stats",
                  (dir / "stats.json").string()},
                 dir / "master.log");
  const int sender = ::socket(AF_INET, SOCK_DGRAM, 0);
  for (int i = 0; i < 2; ++i) {
    std::this_thread::sleep_for(600ms);
    const std::string datagram = std::to_string(i) + "," + testing::kCornellPose;
    ::sendto(sender, datagram.data(), datagram.size(), 0, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  }
  ::close(sender);
  const auto status = master.wait(30s);
  ASSERT_TRUE(status.has_value()) << master.log();
  EXPECT_EQ(*status, 0) << master.log();
  const json stats = json::parse(read_file_text(dir / "stats.json"));
  EXPECT_EQ(stats["summary"]["frames_complete"], 2) << master.log();
  // Latency counts from the pose each frame used, not from an old pose rendered again.
  for (const auto& f : stats["frames"]) EXPECT_LT(f["latency_ms"].get<double>(), 5000.0);
}

}  // namespace
}  // namespace tessera
