// The cluster end to end: real tessera-worker processes on loopback, tessera-master driving
// them, frames compared pixel for pixel with tessera-render on one machine; faults (a worker
// killed mid-frame, no worker left), scene push, bad command lines.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cluster_test_support.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;
using testing::Process;
using testing::TempDir;
using testing::WorkerProcess;

struct Cluster2 {
  TempDir dir{"cluster"};
  std::filesystem::path secret = dir / "secret";
  std::filesystem::path scenes_a = dir / "scenes_a", scenes_b = dir / "scenes_b";
  Cluster2() {
    testing::write_secret(secret, testing::kClusterSecret);
    std::filesystem::create_directories(scenes_a);
    std::filesystem::create_directories(scenes_b);
    std::filesystem::copy_file(testing::cornell_tpk(), scenes_a / "cornell.tpk");
  }
};

std::string master_command(const std::string& workers, const std::filesystem::path& secret, const std::string& extra) {
  return "timeout 60 " + testing::master_binary().string() + " --workers " + workers + " --scene " + testing::cornell_tpk().string() +
         " --secret-file " + secret.string() + " --no-status --size 96x64 --tile 32 " + extra;
}

nlohmann::json read_json(const std::filesystem::path& path) { return nlohmann::json::parse(read_file_text(path)); }

// Every tile of every frame composited exactly once, and handed out once when nothing failed.
void expect_every_tile_once(const nlohmann::json& stats, bool faults_allowed) {
  for (const auto& f : stats["frames"]) {
    EXPECT_TRUE(f["complete"].get<bool>());
    EXPECT_EQ(f["tiles_received"], f["tiles"]);
    EXPECT_EQ(f["duplicates"], 0);
    uint32_t sum = 0;
    for (const auto& w : f["workers"]) sum += w["tiles"].get<uint32_t>();
    EXPECT_EQ(sum, f["tiles"].get<uint32_t>());
    if (!faults_allowed) {
      EXPECT_EQ(f["assignments"], f["tiles"]);
      EXPECT_EQ(f["reassigned"], 0);
    }
  }
}

TEST(Cluster, StaticAndDynamicFramesEqualTheSingleMachineRender) {
  Cluster2 c;
  WorkerProcess a(c.dir.path(), "a", c.scenes_a, c.secret), b(c.dir.path(), "b", c.scenes_a, c.secret);
  ASSERT_FALSE(a.address().empty()) << a.log();
  ASSERT_FALSE(b.address().empty()) << b.log();
  const std::string pose2 = "300,250,-700,0.9961947,0,0.0871557,0";
  testing::write_text(c.dir / "poses.csv", std::string("t,px,py,pz,qw,qx,qy,qz\n0,") + testing::kCornellPose + "\n0.1," + pose2 + "\n");
  const ImageRgba8 ref0 = testing::reference_render(testing::cornell_tpk(), testing::kCornellPose, "96x64", c.dir / "ref0.png");
  const ImageRgba8 ref1 = testing::reference_render(testing::cornell_tpk(), pose2, "96x64", c.dir / "ref1.png");
  for (const std::string schedule : {"static", "dynamic"}) {
    SCOPED_TRACE(schedule);
    const auto out = c.dir / schedule;
    const auto r = testing::run_command(master_command(a.address() + "," + b.address(), c.secret,
                                                       "--schedule " + schedule + " --poses " + (c.dir / "poses.csv").string() +
                                                           " --out " + out.string() + " --overlay --stats " + (out / "stats.json").string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(read_image(out / "frame_000000.png"), ref0);
    EXPECT_EQ(read_image(out / "frame_000001.png"), ref1);
    EXPECT_TRUE(std::filesystem::exists(out / "overlay_000001.png"));
    const auto stats = read_json(out / "stats.json");
    ASSERT_EQ(stats["frames"].size(), 2u);
    expect_every_tile_once(stats, false);
    // Both workers took part (6 tiles dealt over 2 workers).
    for (const auto& w : stats["frames"][0]["workers"]) EXPECT_GT(w["tiles"].get<int>(), 0);
  }
  // Workers stop cleanly on SIGTERM.
  a.process().signal(SIGTERM);
  EXPECT_EQ(a.process().wait(5s), 0) << a.log();
  EXPECT_NE(a.log().find("shutting down"), std::string::npos);
}

TEST(Cluster, PoclWorkerMatchesTheHostRender) {
  Cluster2 c;
  WorkerProcess cpu(c.dir.path(), "cpu", c.scenes_a, c.secret, {"--device", "cpu"});
  ASSERT_FALSE(cpu.address().empty()) << cpu.log();
  testing::write_text(c.dir / "poses.csv", std::string("0,") + testing::kCornellPose + "\n");
  const auto r = testing::run_command(master_command(cpu.address(), c.secret,
                                                     "--schedule dynamic --poses " + (c.dir / "poses.csv").string() + " --out " +
                                                         (c.dir / "out").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output << cpu.log();
  EXPECT_EQ(read_image(c.dir / "out/frame_000000.png"),
            testing::reference_render(testing::cornell_tpk(), testing::kCornellPose, "96x64", c.dir / "ref.png", "host"));
}

TEST(Cluster, SceneIsPushedWhenTheWorkerLacksIt) {
  Cluster2 c;
  WorkerProcess b(c.dir.path(), "b", c.scenes_b, c.secret);  // empty scene folder
  ASSERT_FALSE(b.address().empty()) << b.log();
  testing::write_text(c.dir / "poses.csv", std::string("0,") + testing::kCornellPose + "\n");
  const std::string cmd = master_command(b.address(), c.secret, "--poses " + (c.dir / "poses.csv").string() + " --out " + (c.dir / "out").string());
  const auto first = testing::run_command(cmd);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("pushed"), std::string::npos) << first.output;
  EXPECT_EQ(read_image(c.dir / "out/frame_000000.png"),
            testing::reference_render(testing::cornell_tpk(), testing::kCornellPose, "96x64", c.dir / "ref.png"));
  // The verified copy now sits in the worker's folder, byte for byte; the next run loads it.
  ASSERT_TRUE(std::filesystem::exists(c.scenes_b / testing::cornell_tpk().filename()));
  EXPECT_EQ(read_file_bytes(c.scenes_b / testing::cornell_tpk().filename()), read_file_bytes(testing::cornell_tpk()));
  const auto second = testing::run_command(cmd);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(second.output.find("pushed"), std::string::npos) << second.output;
}

// Stereo: both eyes side by side, each the single-machine render from that eye's position.
TEST(Cluster, StereoFramesAreBothEyesSideBySide) {
  Cluster2 c;
  WorkerProcess a(c.dir.path(), "a", c.scenes_a, c.secret);
  ASSERT_FALSE(a.address().empty());
  testing::write_text(c.dir / "poses.csv", std::string("0,") + testing::kCornellPose + "\n");
  const auto r = testing::run_command(
      "timeout 60 " + testing::master_binary().string() + " --workers " + a.address() + " --scene " + testing::cornell_tpk().string() +
      " --secret-file " + c.secret.string() + " --no-status --size 48x64 --tile 16 --ipd 64 --schedule dynamic --poses " +
      (c.dir / "poses.csv").string() + " --out " + (c.dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const ImageRgba8 frame = read_image(c.dir / "out/frame_000000.png");
  ASSERT_EQ(frame.width(), 96);
  // The camera looks down +z, so its right is -x: the left eye sits at x + 32, the right at x - 32.
  EXPECT_EQ(extract_tile(frame, 0, 0, 48, 64), testing::reference_render(testing::cornell_tpk(), "310,273,-800,0,0,1,0", "48x64", c.dir / "l.png"));
  EXPECT_EQ(extract_tile(frame, 48, 0, 48, 64), testing::reference_render(testing::cornell_tpk(), "246,273,-800,0,0,1,0", "48x64", c.dir / "r.png"));
}

// A headset streaming its pose over UDP (the datagram format of docs/tessera-master.md).
TEST(Cluster, LivePosesOverUdp) {
  Cluster2 c;
  WorkerProcess a(c.dir.path(), "a", c.scenes_a, c.secret);
  ASSERT_FALSE(a.address().empty());
  const int probe = ::socket(AF_INET, SOCK_DGRAM, 0);  // find a free UDP port
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t length = sizeof addr;
  ::getsockname(probe, reinterpret_cast<sockaddr*>(&addr), &length);
  ::close(probe);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  Process master({testing::master_binary().string(), "--workers", a.address(), "--scene", testing::cornell_tpk().string(),
                  "--secret-file", c.secret.string(), "--no-status", "--size", "96x64", "--tile", "32", "--poses",
                  "udp://127.0.0.1:" + port, "--frames", "3", "--out", (c.dir / "out").string()},
                 c.dir / "master.log");
  const int sender = ::socket(AF_INET, SOCK_DGRAM, 0);
  std::optional<int> status;
  for (int i = 0; i < 500 && !status; ++i) {
    const std::string datagram = i % 2 ? std::string("{\"t\": ") + std::to_string(i) + ", \"position\": [278,273,-800], \"orientation\": [0,0,1,0]}"
                                       : std::to_string(i) + "," + testing::kCornellPose;
    ::sendto(sender, datagram.data(), datagram.size(), 0, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    status = master.wait(20ms);
  }
  ::close(sender);
  ASSERT_TRUE(status.has_value()) << master.log();
  ASSERT_EQ(*status, 0) << master.log();
  const ImageRgba8 ref = testing::reference_render(testing::cornell_tpk(), testing::kCornellPose, "96x64", c.dir / "ref.png");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(read_image(c.dir / ("out/frame_00000" + std::to_string(i) + ".png")), ref);
}

TEST(ClusterFaults, WorkerKilledMidFrameTheFramesStillCompleteAndMatch) {
  for (const std::string schedule : {"static", "dynamic"}) {
    SCOPED_TRACE(schedule);
    Cluster2 c;
    // Slowed down so that a frame takes ~0.3 s and the kill surely lands inside one.
    WorkerProcess a(c.dir.path(), "a", c.scenes_a, c.secret, {"--device", "host", "--threads", "1", "--slowdown-ms", "80"});
    WorkerProcess b(c.dir.path(), "b", c.scenes_a, c.secret, {"--device", "host", "--threads", "1", "--slowdown-ms", "80"});
    ASSERT_FALSE(a.address().empty() || b.address().empty());
    std::string poses;
    for (int i = 0; i < 4; ++i) poses += std::to_string(i) + "," + testing::kCornellPose + "\n";
    testing::write_text(c.dir / "poses.csv", poses);
    const auto out = c.dir / "out";
    Process master({testing::master_binary().string(), "--workers", a.address() + "," + b.address(), "--scene",
                    testing::cornell_tpk().string(), "--secret-file", c.secret.string(), "--no-status", "--size", "96x64", "--tile",
                    "32", "--schedule", schedule, "--poses", (c.dir / "poses.csv").string(), "--out", out.string(), "--stats",
                    (c.dir / "stats.json").string(), "--reconnect-interval", "0.5"},
                   c.dir / "master.log");
    for (int i = 0; i < 1000 && !std::filesystem::exists(out / "frame_000000.png"); ++i) std::this_thread::sleep_for(5ms);
    ASSERT_TRUE(std::filesystem::exists(out / "frame_000000.png")) << master.log();
    b.process().signal(SIGKILL);  // frame 1 is in flight now
    const auto status = master.wait(30s);
    ASSERT_TRUE(status.has_value()) << master.log();
    ASSERT_EQ(*status, 0) << master.log();
    EXPECT_NE(master.log().find("lost"), std::string::npos) << master.log();
    const ImageRgba8 ref = testing::reference_render(testing::cornell_tpk(), testing::kCornellPose, "96x64", c.dir / "ref.png");
    for (int i = 0; i < 4; ++i) EXPECT_EQ(read_image(out / ("frame_00000" + std::to_string(i) + ".png")), ref) << i;
    const auto stats = read_json(c.dir / "stats.json");
    expect_every_tile_once(stats, true);
    uint32_t reassigned = 0;
    for (const auto& f : stats["frames"]) reassigned += f["reassigned"].get<uint32_t>();
    EXPECT_GT(reassigned, 0u) << stats.dump(1);
  }
}

// A worker that stalls (SIGSTOP) is dropped after the heartbeat deadline, its tiles go to the
// other, and once it runs again (SIGCONT) it rejoins and takes tiles in later frames.
TEST(ClusterFaults, StalledWorkerIsDroppedAndRejoinsLater) {
  Cluster2 c;
  WorkerProcess a(c.dir.path(), "a", c.scenes_a, c.secret, {"--device", "host", "--threads", "1", "--slowdown-ms", "40"});
  WorkerProcess b(c.dir.path(), "b", c.scenes_a, c.secret, {"--device", "host", "--threads", "1", "--slowdown-ms", "40"});
  ASSERT_FALSE(a.address().empty() || b.address().empty());
  std::string poses;
  for (int i = 0; i < 40; ++i) poses += std::to_string(i) + "," + testing::kCornellPose + "\n";
  testing::write_text(c.dir / "poses.csv", poses);
  const auto out = c.dir / "out";
  Process master({testing::master_binary().string(), "--workers", a.address() + "," + b.address(), "--scene",
                  testing::cornell_tpk().string(), "--secret-file", c.secret.string(), "--no-status", "--size", "96x64", "--tile",
                  "32", "--schedule", "dynamic", "--poses", (c.dir / "poses.csv").string(), "--out", out.string(), "--stats",
                  (c.dir / "stats.json").string(), "--heartbeat-timeout", "1", "--reconnect-interval", "0.3",
                  "--connect-timeout", "1"},
                 c.dir / "master.log");
  for (int i = 0; i < 1000 && !std::filesystem::exists(out / "frame_000001.png"); ++i) std::this_thread::sleep_for(5ms);
  b.process().signal(SIGSTOP);
  std::this_thread::sleep_for(2s);
  b.process().signal(SIGCONT);
  const auto status = master.wait(40s);
  ASSERT_TRUE(status.has_value()) << master.log();
  ASSERT_EQ(*status, 0) << master.log();
  EXPECT_NE(master.log().find("nothing heard from the peer"), std::string::npos) << master.log();
  EXPECT_NE(master.log().find("rejoined: "), std::string::npos) << master.log();
  const auto stats = read_json(c.dir / "stats.json");
  expect_every_tile_once(stats, true);
  // Worker b rendered tiles again in the last frames.
  const auto& last = stats["frames"][stats["frames"].size() - 1];
  EXPECT_GT(last["workers"][1]["tiles"].get<int>(), 0) << stats.dump(1);
  const ImageRgba8 ref = testing::reference_render(testing::cornell_tpk(), testing::kCornellPose, "96x64", c.dir / "ref.png");
  for (int i : {0, 5, 20, 39}) {
    char name[32];
    std::snprintf(name, sizeof name, "frame_%06d.png", i);
    EXPECT_EQ(read_image(out / name), ref) << name;
  }
}

TEST(ClusterFaults, NoWorkerLeftIsAClearErrorAndNoFrameIsWrittenIncomplete) {
  Cluster2 c;
  WorkerProcess a(c.dir.path(), "a", c.scenes_a, c.secret, {"--device", "host", "--threads", "1", "--slowdown-ms", "100"});
  ASSERT_FALSE(a.address().empty());
  std::string poses;
  for (int i = 0; i < 20; ++i) poses += std::to_string(i) + "," + testing::kCornellPose + "\n";
  testing::write_text(c.dir / "poses.csv", poses);
  const auto out = c.dir / "out";
  Process master({testing::master_binary().string(), "--workers", a.address(), "--scene", testing::cornell_tpk().string(),
                  "--secret-file", c.secret.string(), "--no-status", "--size", "96x64", "--tile", "32", "--poses",
                  (c.dir / "poses.csv").string(), "--out", out.string(), "--no-worker-timeout", "1", "--reconnect-interval", "0.2"},
                 c.dir / "master.log");
  for (int i = 0; i < 1000 && !std::filesystem::exists(out / "frame_000000.png"); ++i) std::this_thread::sleep_for(5ms);
  a.process().signal(SIGKILL);
  const auto status = master.wait(20s);
  ASSERT_TRUE(status.has_value()) << master.log();
  EXPECT_EQ(*status, 1) << master.log();
  EXPECT_NE(master.log().find("tessera-master: error: no worker left"), std::string::npos) << master.log();
  // Whatever was written is whole: every written frame equals the reference.
  const ImageRgba8 ref = testing::reference_render(testing::cornell_tpk(), testing::kCornellPose, "96x64", c.dir / "ref.png");
  size_t written = 0;
  for (const auto& item : std::filesystem::directory_iterator(out)) {
    if (item.path().extension() != ".png") continue;
    EXPECT_EQ(read_image(item.path()), ref) << item.path();
    ++written;
  }
  EXPECT_LT(written, 20u);
}

TEST(ClusterAuth, MasterWithTheWrongSecretIsRefusedOnBothSides) {
  Cluster2 c;
  WorkerProcess a(c.dir.path(), "a", c.scenes_a, c.secret);
  ASSERT_FALSE(a.address().empty());
  testing::write_secret(c.dir / "other", testing::kOtherSecret);
  const auto r = testing::run_command(master_command(a.address(), c.dir / "other", "--poses orbit --frames 1 --reconnect-interval 0"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("tessera-master: error: no worker could be used"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("authentication failed"), std::string::npos) << r.output;
  for (int i = 0; i < 100 && a.log().find("refused:") == std::string::npos; ++i) std::this_thread::sleep_for(20ms);
  EXPECT_NE(a.log().find("refused: authentication failed: wrong shared secret"), std::string::npos) << a.log();
}

TEST(ClusterCli, BadInputIsOneClearErrorLine) {
  TempDir dir("cluster_cli");
  testing::write_secret(dir / "secret", testing::kClusterSecret);
  testing::write_secret(dir / "short", "abc");
  const std::string master = testing::master_binary().string() + " --scene " + testing::cornell_tpk().string();
  const auto expect_error = [](const testing::CommandResult& r, const std::string& program, const std::string& needle) {
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.rfind(program + ": error: ", 0), 0u) << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  };
  const std::string s = " --secret-file " + (dir / "secret").string();
  expect_error(testing::run_command(master + s), "tessera-master", "--workers");
  expect_error(testing::run_command(master + s + " --workers 127.0.0.1"), "tessera-master", "HOST:PORT");
  expect_error(testing::run_command(master + s + " --workers 127.0.0.1:1 --size 10by10"), "tessera-master", "--size");
  expect_error(testing::run_command(master + s + " --workers 127.0.0.1:1 --mode fancy"), "tessera-master", "--mode");
  expect_error(testing::run_command(master + s + " --workers 127.0.0.1:1 --schedule fancy"), "tessera-master", "--schedule");
  expect_error(testing::run_command(master + " --workers 127.0.0.1:1 --secret-file " + (dir / "short").string()), "tessera-master",
               "at least 64");
  expect_error(testing::run_command(master + s + " --workers 127.0.0.1:1 --poses " + (dir / "missing.csv").string()),
               "tessera-master", "missing.csv");
  testing::write_text(dir / "bad.csv", "0,1,2,3,0.5,0,0,0\n");
  expect_error(testing::run_command(master + s + " --workers 127.0.0.1:1 --poses " + (dir / "bad.csv").string()), "tessera-master",
               "line 1");
  const std::string worker = testing::worker_binary().string() + " --scenes " + dir.path().string();
  expect_error(testing::run_command(worker), "tessera-worker", "--secret-file");
  expect_error(testing::run_command(worker + " --secret-file " + (dir / "nope").string()), "tessera-worker", "secret");
  expect_error(testing::run_command(worker + s + " --listen nowhere"), "tessera-worker", "--listen");
  EXPECT_NE(testing::run_command(testing::master_binary().string() + " --help").output.find("--schedule"), std::string::npos);
  EXPECT_NE(testing::run_command(testing::worker_binary().string() + " --help").output.find("--gpu-mem-limit"), std::string::npos);
}

}  // namespace
}  // namespace tessera
