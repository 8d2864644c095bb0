// The batched launch path through the cluster: OpenCL workers (PoCL here, running the GPU code
// path as GPUs do: CPU devices otherwise launch tile by tile) render each request's tiles in one
// launch (raytrace, vct and pathtrace); frames still equal tessera-render on the same device pixel for
// pixel (stereo batches: tests/test_tile_batch.cpp, tests/test_vct.cpp, tests/test_pathtrace.cpp), and a worker killed mid-run
// loses no frame. --stats shows the launches and where the time went. Backends that render tile by
// tile take a tile per launch.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cluster_test_support.h"
#include "common/cl/device_selection.h"
#include "opencl_test_support.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;
using testing::Process;
using testing::TempDir;
using testing::WorkerProcess;

constexpr const char* kPose2 = "300,250,-700,0.9961947,0,0.0871557,0";

using testing::opencl_available;

struct BatchedCluster {
  testing::ScopedEnv gpu_code_path{"TESSERA_CPU_PATHS", "off"};  // workers and tessera-render inherit it
  TempDir dir{"cluster_batched"};
  std::filesystem::path secret = dir / "secret";
  std::filesystem::path scenes = dir / "scenes";
  BatchedCluster() {
    testing::write_secret(secret, testing::kClusterSecret);
    std::filesystem::create_directories(scenes);
    std::filesystem::copy_file(testing::cornell_tpk(), scenes / "cornell.tpk");
  }
  std::unique_ptr<WorkerProcess> worker(const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> options{"--device", "cpu"};
    options.insert(options.end(), extra.begin(), extra.end());
    auto w = std::make_unique<WorkerProcess>(dir.path(), name, scenes, secret, options);
    EXPECT_FALSE(w->address().empty()) << w->log();
    return w;
  }
  // Four frames, the pose changing every frame, unless `pose_lines` (CSV lines) say otherwise.
  std::vector<std::string> master_args(const std::string& workers, const std::string& out, const std::vector<std::string>& extra,
                                       std::string poses = {}) {
    if (poses.empty())
      for (int i = 0; i < 4; ++i) poses += std::to_string(i) + "," + (i % 2 ? kPose2 : testing::kCornellPose) + "\n";
    testing::write_text(dir / (out + ".csv"), poses);
    std::vector<std::string> args{testing::master_binary().string(), "--workers", workers, "--scene", testing::cornell_tpk().string(),
                                  "--secret-file", secret.string(), "--no-status", "--size", "96x64", "--tile", "16", "--poses",
                                  (dir / (out + ".csv")).string(), "--out", (dir / out).string(), "--stats",
                                  (dir / (out + ".json")).string(), "--startup-timeout", "120"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  // tessera-render on the workers' device, tile by tile.
  ImageRgba8 reference(const std::string& pose, const std::string& name) {
    const auto out = dir / (name + ".png");
    const auto r = testing::run_command(testing::render_binary().string() + " " + testing::cornell_tpk().string() +
                                        " --size 96x64 --device cpu --pose " + pose + " -o " + out.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return read_image(out);
  }
  nlohmann::json stats(const std::string& out) { return nlohmann::json::parse(read_file_text(dir / (out + ".json"))); }
};

TEST(ClusterBatched, OneLaunchPerRequestFramesEqualTheSingleMachineRender) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  BatchedCluster c;
  auto a = c.worker("a"), b = c.worker("b");
  Process master(c.master_args(a->address() + "," + b->address(), "out", {"--schedule", "static"}), c.dir / "master.log");
  const auto status = master.wait(180s);
  ASSERT_TRUE(status.has_value()) << master.log();
  ASSERT_EQ(*status, 0) << master.log();
  const ImageRgba8 ref0 = c.reference(testing::kCornellPose, "ref0"), ref1 = c.reference(kPose2, "ref1");
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE(read_image(c.dir / "out" / ("frame_00000" + std::to_string(i) + ".png")) == (i % 2 ? ref1 : ref0)) << i;
  // Static: each worker's share of a frame is one request and one launch.
  const auto stats = c.stats("out");
  for (const auto& f : stats["frames"]) {
    ASSERT_TRUE(f["complete"].get<bool>());
    uint32_t launches = 0, tiles = 0;
    for (const auto& w : f["workers"]) {
      launches += w["batches"].get<uint32_t>();
      tiles += w["tiles"].get<uint32_t>();
    }
    EXPECT_EQ(tiles, f["tiles"].get<uint32_t>());
    EXPECT_EQ(launches, 2u) << f.dump();
    for (const char* stage : {"pose_wait", "request_out", "queue", "readback", "encode", "wire", "decode", "composite", "output"})
      EXPECT_GE(f["stages_ms"][stage].get<double>(), 0.0) << stage;
    EXPECT_GT(f["stages_ms"]["device"].get<double>(), 0.0);
  }
  EXPECT_TRUE(stats["summary"]["median_stages_ms"].contains("wire"));
}

// vct too: each worker's share of a static frame is one request and one batched launch (the two
// kernels over all its tiles), and the frames equal tessera-render's tile-by-tile render.
TEST(ClusterBatched, VctOneLaunchPerRequestFramesEqualTheSingleMachineRender) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  BatchedCluster c;
  auto a = c.worker("a"), b = c.worker("b");
  const std::string vct = "--mode vct --vct-grid 64 --vct-preset 5 --shadow-cone 7.5";
  Process master(c.master_args(a->address() + "," + b->address(), "vct",
                               {"--schedule", "static", "--mode", "vct", "--vct-grid", "64", "--vct-preset", "5", "--shadow-cone", "7.5"}),
                 c.dir / "master.log");
  const auto status = master.wait(180s);
  ASSERT_TRUE(status.has_value()) << master.log();
  ASSERT_EQ(*status, 0) << master.log() << a->log();
  const auto render = [&](const std::string& pose, const std::string& name) {
    const auto out = c.dir / (name + ".png");
    const auto r = testing::run_command(testing::render_binary().string() + " " + testing::cornell_tpk().string() +
                                        " --size 96x64 --device cpu " + vct + " --pose " + pose + " -o " + out.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return read_image(out);
  };
  const ImageRgba8 ref0 = render(testing::kCornellPose, "vct0"), ref1 = render(kPose2, "vct1");
  ASSERT_NE(ref0, ref1);
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE(read_image(c.dir / "vct" / ("frame_00000" + std::to_string(i) + ".png")) == (i % 2 ? ref1 : ref0)) << i;
  for (const auto& f : c.stats("vct")["frames"]) {
    ASSERT_TRUE(f["complete"].get<bool>());
    double launches = 0;
    for (const auto& w : f["workers"]) launches += w["batches"].get<double>();
    EXPECT_NEAR(launches, 2.0, 1e-6) << f.dump();
  }
}

// pathtrace too: each worker's share of a static stereo frame is one request and one batch (every
// launch over all its tile pairs, each pair read back and sent on its own; also in waves); the
// tiles accumulate while the pose holds, and the frames equal tessera-render's on the same device
// (batch against tile by tile: test_pathtrace.cpp).
TEST(ClusterBatched, PathtraceOneLaunchPerRequestFramesEqualTheSingleMachineRender) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  for (const char* waves : {"1", "3"}) {
    SCOPED_TRACE(std::string("waves ") + waves);
    testing::ScopedEnv env("TESSERA_PT_WAVES", waves);  // the workers inherit it
    BatchedCluster c;
    auto a = c.worker("a"), b = c.worker("b");
    // Plain variant: no reprojected samples, whose atomic additions may land in any order.
    const std::vector<std::string> pt{"--mode", "pathtrace", "--stereo", "--ipd", "64", "--spp", "2", "--pt-variant", "plain"};
    std::vector<std::string> extra{"--schedule", "static"};
    extra.insert(extra.end(), pt.begin(), pt.end());
    const std::string poses = std::string("0,") + testing::kCornellPose + "\n1," + testing::kCornellPose + "\n2," + kPose2 + "\n";
    Process master(c.master_args(a->address() + "," + b->address(), "pt", extra, poses), c.dir / "master.log");
    const auto status = master.wait(300s);
    ASSERT_TRUE(status.has_value()) << master.log();
    ASSERT_EQ(*status, 0) << master.log() << a->log();
    const auto render = [&](const std::string& pose, int spp, const std::string& name) {
      const auto out = c.dir / (name + ".png");
      const auto r = testing::run_command(testing::render_binary().string() + " " + testing::cornell_tpk().string() +
                                          " --size 96x64 --tile 16 --device cpu --mode pathtrace --stereo --ipd 64 --pt-variant plain"
                                          " --spp " + std::to_string(spp) + " --pose " + pose + " -o " + out.string());
      EXPECT_EQ(r.exit_code, 0) << r.output;
      return read_image(out);
    };
    EXPECT_TRUE(read_image(c.dir / "pt" / "frame_000000.png") == render(testing::kCornellPose, 2, "pt0"));
    EXPECT_TRUE(read_image(c.dir / "pt" / "frame_000001.png") == render(testing::kCornellPose, 4, "pt0_4spp"));
    EXPECT_TRUE(read_image(c.dir / "pt" / "frame_000002.png") == render(kPose2, 2, "pt2"));
    const auto stats = c.stats("pt");
    ASSERT_EQ(stats["frames"].size(), 3u);
    const double spp[] = {2, 4, 2};
    for (size_t i = 0; i < 3; ++i) {
      const auto& f = stats["frames"][i];
      ASSERT_TRUE(f["complete"].get<bool>());
      EXPECT_DOUBLE_EQ(f["samples_per_pixel"].get<double>(), spp[i]);
      double launches = 0;
      for (const auto& w : f["workers"]) launches += w["batches"].get<double>();
      // The first pair a worker renders makes its path tracer and goes alone.
      EXPECT_NEAR(launches, i == 0 ? 4.0 : 2.0, 1e-6) << f.dump();
    }
  }
}

TEST(ClusterBatched, WorkerKilledMidRunLosesNoFrame) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  for (const std::string schedule : {"static", "dynamic"}) {
    SCOPED_TRACE(schedule);
    BatchedCluster c;
    // Slowed down (per tile of a batch) so that a frame takes ~0.5 s and the kill lands inside one.
    auto a = c.worker("a", {"--slowdown-ms", "40"}), b = c.worker("b", {"--slowdown-ms", "40"});
    Process master(c.master_args(a->address() + "," + b->address(), "out",
                                 {"--schedule", schedule, "--inflight", "4", "--reconnect-interval", "0.5"}),
                   c.dir / "master.log");
    const auto first = c.dir / "out" / "frame_000000.png";
    for (int i = 0; i < 24000 && !std::filesystem::exists(first) && !master.wait(5ms); ++i) {
    }
    ASSERT_TRUE(std::filesystem::exists(first)) << master.log();
    b->process().signal(SIGKILL);  // frame 1 is in flight now
    const auto status = master.wait(120s);
    ASSERT_TRUE(status.has_value()) << master.log();
    ASSERT_EQ(*status, 0) << master.log();
    EXPECT_NE(master.log().find("lost"), std::string::npos) << master.log();
    const ImageRgba8 ref0 = c.reference(testing::kCornellPose, "ref0"), ref1 = c.reference(kPose2, "ref1");
    for (int i = 0; i < 4; ++i)
      EXPECT_TRUE(read_image(c.dir / "out" / ("frame_00000" + std::to_string(i) + ".png")) == (i % 2 ? ref1 : ref0)) << i;
    const auto stats = c.stats("out");
    uint32_t reassigned = 0;
    for (const auto& f : stats["frames"]) {
      EXPECT_TRUE(f["complete"].get<bool>());
      EXPECT_EQ(f["tiles_received"], f["tiles"]);
      EXPECT_EQ(f["duplicates"], 0);
      reassigned += f["reassigned"].get<uint32_t>();
    }
    EXPECT_GT(reassigned, 0u) << stats.dump(1);
  }
}

// Backends that render a batch tile by tile (the host backend here) take a tile per launch: each
// tile leaves the worker as soon as it is rendered instead of waiting for the rest of its request,
// so in the dynamic schedule its replacement travels while the next queued tile renders.
TEST(ClusterBatched, TileByTileBackendsSendEachTileWhenItIsDone) {
  TempDir dir("cluster_tile_by_tile");
  const auto secret = dir / "secret", scenes = dir / "scenes";
  testing::write_secret(secret, testing::kClusterSecret);
  std::filesystem::create_directories(scenes);
  std::filesystem::copy_file(testing::cornell_tpk(), scenes / "cornell.tpk");
  WorkerProcess a(dir.path(), "a", scenes, secret), b(dir.path(), "b", scenes, secret);
  ASSERT_FALSE(a.address().empty()) << a.log();
  ASSERT_FALSE(b.address().empty()) << b.log();
  const auto ref = dir / "ref.png";
  const auto r = testing::run_command(testing::render_binary().string() + " " + testing::cornell_tpk().string() +
                                      " --size 96x64 --device host --pose " + testing::kCornellPose + " -o " + ref.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const std::string schedule : {"dynamic", "static"}) {
    SCOPED_TRACE(schedule);
    const auto out = dir / schedule, stats = dir / (schedule + ".json");
    Process master({testing::master_binary().string(), "--workers", a.address() + "," + b.address(), "--scene",
                    testing::cornell_tpk().string(), "--secret-file", secret.string(), "--no-status", "--size", "96x64", "--tile",
                    "16", "--schedule", schedule, "--inflight", "4", "--poses", "camera", "--frames", "2", "--out", out.string(),
                    "--stats", stats.string()},
                   dir / (schedule + ".log"));
    const auto status = master.wait(std::chrono::seconds(120));
    ASSERT_TRUE(status.has_value()) << master.log();
    ASSERT_EQ(*status, 0) << master.log();
    const auto json = nlohmann::json::parse(read_file_text(stats));
    for (const auto& f : json["frames"]) {
      uint32_t tiles = 0;
      for (const auto& w : f["workers"]) {
        EXPECT_EQ(w["batches"].get<uint32_t>(), w["tiles"].get<uint32_t>()) << f.dump();
        tiles += w["tiles"].get<uint32_t>();
      }
      EXPECT_EQ(tiles, 24u);
    }
    for (int i = 0; i < 2; ++i)
      EXPECT_TRUE(read_image(out / ("frame_00000" + std::to_string(i) + ".png")) == read_image(ref)) << i;
  }
}

}  // namespace
}  // namespace tessera
