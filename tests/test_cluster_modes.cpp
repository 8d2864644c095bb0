// The pathtrace and vct render modes through the cluster: real tessera-worker processes on
// loopback driven by tessera-master, frames compared pixel for pixel with tessera-render on one
// machine (stereo pathtrace side by side, vct with a moved light), progressive accumulation while
// the pose holds and its reset on a change, tile pairs on the wire, bad mode parameters.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cluster_test_support.h"
#include "common/base/hash.h"
#include "common/cl/device_selection.h"
#include "common/net/auth.h"
#include "common/net/protocol.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
using testing::WorkerProcess;

constexpr const char* kSecret = testing::kClusterSecret;
constexpr const char* kPose0 = "278,273,-800,0,0,1,0";
constexpr const char* kPose1 = "300,250,-700,0.9961947,0,0.0871557,0";
// 64x48 per eye in 32-pixel tiles: 2 x 2 tiles (pairs) per frame, quick on one host thread.
constexpr const char* kSize = "64x48";
constexpr const char* kTile = "32";
constexpr const char* kStereoPt = " --mode pathtrace --stereo --ipd 64";
// The pathtrace options of these tests with `spp` samples per frame.
std::string pathtrace(int spp = 2) { return std::string(kStereoPt) + " --spp " + std::to_string(spp); }

struct ModesCluster {
  TempDir dir{"cluster_modes"};
  std::filesystem::path secret = dir / "secret";
  std::filesystem::path scenes = dir / "scenes";
  ModesCluster() {
    testing::write_secret(secret, kSecret);
    std::filesystem::create_directories(scenes);
    std::filesystem::copy_file(testing::cornell_tpk(), scenes / "cornell.tpk");
  }
  std::unique_ptr<WorkerProcess> worker(const std::string& name, const std::string& device = "host") {
    std::vector<std::string> options{"--device", device};
    if (device == "host") options.insert(options.end(), {"--threads", "1"});
    auto w = std::make_unique<WorkerProcess>(dir.path(), name, scenes, secret, options);
    EXPECT_FALSE(w->address().empty()) << w->log();
    return w;
  }
  // Runs tessera-master on `workers` with `extra` options; poses from `poses` (CSV lines).
  testing::CommandResult master(const std::string& workers, const std::string& poses, const std::string& out,
                                const std::string& extra) {
    testing::write_text(dir / (out + ".csv"), poses);
    return testing::run_command("timeout 60 " + testing::master_binary().string() + " --workers " + workers + " --scene " +
                                testing::cornell_tpk().string() + " --secret-file " + secret.string() + " --no-status --size " +
                                kSize + " --tile " + kTile + " --poses " + (dir / (out + ".csv")).string() + " --out " +
                                (dir / out).string() + " --stats " + (dir / out / "stats.json").string() + extra);
  }
  // tessera-render of the same frame on this machine.
  ImageRgba8 reference(const std::string& name, const std::string& options, const std::string& device = "host") {
    const auto out = dir / (name + ".png");
    const auto r = testing::run_command(testing::render_binary().string() + " " + testing::cornell_tpk().string() + " --size " +
                                        kSize + " --tile " + kTile + " --device " + device + " " + options + " -o " + out.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return read_image(out);
  }
  ImageRgba8 frame(const std::string& out, int index) {
    char name[32];
    std::snprintf(name, sizeof name, "frame_%06d.png", index);
    return read_image(dir / out / name);
  }
  nlohmann::json stats(const std::string& out) { return nlohmann::json::parse(read_file_text(dir / out / "stats.json")); }
};

std::string pose_line(int t, const std::string& pose, const std::string& gaze = {}) {
  return std::to_string(t) + "," + pose + (gaze.empty() ? "" : "," + gaze) + "\n";
}

// Every tile (pathtrace stereo: every tile pair) of every frame arrived once and was handed out once.
void expect_every_tile_once(const nlohmann::json& stats, uint32_t tiles) {
  for (const auto& f : stats["frames"]) {
    EXPECT_TRUE(f["complete"].get<bool>());
    EXPECT_EQ(f["tiles"].get<uint32_t>(), tiles);
    EXPECT_EQ(f["tiles_received"], f["tiles"]);
    EXPECT_EQ(f["assignments"], f["tiles"]);
    EXPECT_EQ(f["duplicates"], 0);
    uint32_t sum = 0;
    for (const auto& w : f["workers"]) sum += w["tiles"].get<uint32_t>();
    EXPECT_EQ(sum, tiles);
  }
}

// A stereo pathtrace frame from two workers is tessera-render's side-by-side frame, for the
// static and the dynamic schedule, with the gaze from the pose file or the image centre.
TEST(ClusterModes, PathtraceStereoFramesEqualTheSingleMachineRender) {
  ModesCluster c;
  const ImageRgba8 ref0 = c.reference("ref0", pathtrace() + " --pose " + kPose0 + " --gaze 0.25,0.75");
  const ImageRgba8 ref1 = c.reference("ref1", pathtrace() + " --pose " + kPose1);
  ASSERT_EQ(ref0.width(), 128);
  ASSERT_NE(ref0, ref1);
  for (const std::string schedule : {"static", "dynamic"}) {
    SCOPED_TRACE(schedule);
    auto a = c.worker("a" + schedule), b = c.worker("b" + schedule);  // fresh workers: nothing accumulated yet
    const auto r = c.master(a->address() + "," + b->address(), pose_line(0, kPose0, "0.25,0.75") + pose_line(1, kPose1), schedule,
                            pathtrace() + " --schedule " + schedule);
    ASSERT_EQ(r.exit_code, 0) << r.output << a->log() << b->log();
    EXPECT_EQ(c.frame(schedule, 0), ref0);
    EXPECT_EQ(c.frame(schedule, 1), ref1);
    const auto stats = c.stats(schedule);
    ASSERT_EQ(stats["frames"].size(), 2u);
    expect_every_tile_once(stats, 4);
    for (const auto& f : stats["frames"]) EXPECT_DOUBLE_EQ(f["samples_per_pixel"].get<double>(), 2.0);
    for (const auto& w : stats["frames"][0]["workers"]) EXPECT_GT(w["tiles"].get<int>(), 0);
    EXPECT_EQ(stats["summary"]["mode"], "pathtrace");
  }
}

// While the pose (and gaze) holds, the worker that owns a tile adds samples to it: the second frame
// of a pose is tessera-render's frame with twice the samples; a new pose or gaze starts afresh.
TEST(ClusterModes, PathtraceAccumulatesWhileThePoseHoldsAndResetsOnAChange) {
  ModesCluster c;
  for (const std::string schedule : {"static", "dynamic"}) {
    SCOPED_TRACE(schedule);
    auto a = c.worker("a" + schedule), b = c.worker("b" + schedule);
    const std::string poses = pose_line(0, kPose0) + pose_line(1, kPose0) + pose_line(2, kPose0) + pose_line(3, kPose1) +
                              pose_line(4, kPose1, "0.2,0.3");
    const auto r = c.master(a->address() + "," + b->address(), poses, schedule, pathtrace() + " --schedule " + schedule);
    ASSERT_EQ(r.exit_code, 0) << r.output << a->log() << b->log();
    const auto stats = c.stats(schedule);
    ASSERT_EQ(stats["frames"].size(), 5u);
    expect_every_tile_once(stats, 4);
    const double expected[] = {2, 4, 6, 2, 2};
    for (int i = 0; i < 5; ++i) EXPECT_DOUBLE_EQ(stats["frames"][i]["samples_per_pixel"].get<double>(), expected[i]) << i;
    // Each tile stayed on its worker (static: the same deal every frame; dynamic: tile affinity),
    // so the accumulated frames are exactly tessera-render's with as many samples.
    EXPECT_EQ(c.frame(schedule, 1), c.reference("acc4", pathtrace(4) + " --pose " + kPose0));
    EXPECT_EQ(c.frame(schedule, 3), c.reference("reset", pathtrace() + " --pose " + kPose1));
    EXPECT_EQ(c.frame(schedule, 4), c.reference("gaze", pathtrace() + " --pose " + kPose1 + " --gaze 0.2,0.3"));
  }
  // More samples, less noise: against a 32-sample render, frame 2 (6 spp) is closer than frame 0 (2 spp).
  const ImageRgba8 truth = c.reference("truth", pathtrace(32) + " --pose " + kPose0);
  const auto mse = [&](const ImageRgba8& image) {
    double sum = 0;
    for (int y = 0; y < image.height(); ++y)
      for (int x = 0; x < image.width(); ++x) {
        const Rgba8 p = image.at(x, y), q = truth.at(x, y);
        sum += double(p.r - q.r) * (p.r - q.r) + double(p.g - q.g) * (p.g - q.g) + double(p.b - q.b) * (p.b - q.b);
      }
    return sum;
  };
  EXPECT_LT(mse(c.frame("static", 2)), mse(c.frame("static", 0)));
}

// Workers on an OpenCL device keep each tile's sums in device memory across frames: the held pose
// accumulates and a new pose starts afresh, giving tessera-render's frames on the same device. The
// plain variant and one sample a launch keep the sums' order of additions the same on both sides.
TEST(ClusterModes, PathtraceOnOpenClWorkersAccumulatesInDeviceMemory) {
  bool have_opencl = false;
  try {
    have_opencl = !cl::enumerate_devices().empty();
  } catch (const std::exception&) {
  }
  if (!have_opencl) GTEST_SKIP() << "no OpenCL device";
  ModesCluster c;
  auto a = c.worker("a", "cpu"), b = c.worker("b", "cpu");
  const std::string pt = pathtrace() + " --pt-variant plain --launch-samples 1";
  const auto r = c.master(a->address() + "," + b->address(), pose_line(0, kPose0) + pose_line(1, kPose0) + pose_line(2, kPose1),
                          "static", pt + " --schedule static");
  ASSERT_EQ(r.exit_code, 0) << r.output << a->log() << b->log();
  const auto stats = c.stats("static");
  ASSERT_EQ(stats["frames"].size(), 3u);
  const double expected[] = {2, 4, 2};
  for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(stats["frames"][i]["samples_per_pixel"].get<double>(), expected[i]) << i;
  const std::string plain4 = " --mode pathtrace --stereo --ipd 64 --spp 4 --pt-variant plain --launch-samples 1";
  EXPECT_EQ(c.frame("static", 1), c.reference("cl_acc4", plain4 + " --pose " + kPose0, "cpu"));
  EXPECT_EQ(c.frame("static", 2), c.reference("cl_reset", pt + " --pose " + kPose1, "cpu"));
}

// vct: the worker voxelizes once (announced with the scene load), frames equal tessera-render's,
// and a moved light relights the grid with the same result as tessera-render --move-light.
TEST(ClusterModes, VctFramesEqualTheSingleMachineRender) {
  ModesCluster c;
  auto a = c.worker("a"), b = c.worker("b");
  const std::string vct = " --mode vct --vct-grid 64 --vct-preset 5 --shadow-cone 7.5";
  const ImageRgba8 ref = c.reference("vct", vct + " --pose " + kPose0);
  const ImageRgba8 moved = c.reference("moved", vct + " --pose " + kPose0 + " --move-light 150,500,250");
  ASSERT_NE(ref, moved);
  for (const std::string schedule : {"static", "dynamic"}) {
    SCOPED_TRACE(schedule);
    const auto r = c.master(a->address() + "," + b->address(), pose_line(0, kPose0) + pose_line(1, kPose0), schedule,
                            vct + " --schedule " + schedule);
    ASSERT_EQ(r.exit_code, 0) << r.output << a->log();
    EXPECT_EQ(c.frame(schedule, 0), ref);
    EXPECT_EQ(c.frame(schedule, 1), ref);
    expect_every_tile_once(c.stats(schedule), 4);
  }
  const auto r = c.master(a->address() + "," + b->address(), pose_line(0, kPose0), "moved", vct + " --move-light 150,500,250");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(c.frame("moved", 0), moved);
  // One voxelization per worker for all three runs; the moved light was a relight.
  const std::string log = a->log();
  size_t voxelized = 0;
  for (size_t at = log.find("voxelized"); at != std::string::npos; at = log.find("voxelized", at + 1)) ++voxelized;
  EXPECT_EQ(voxelized, 1u) << log;
  EXPECT_NE(log.find("relit"), std::string::npos) << log;
}

// On the wire: a pathtrace stereo tile pair comes back as the two eye tiles t and n + t; bad mode
// parameters get a clear error and the connection keeps serving.
TEST(ClusterModes, TilePairsOnTheWireAndBadParametersKeepTheConnection) {
  ModesCluster c;
  auto w = c.worker("w");
  testing::SealedClient client(w->port(), kSecret);
  ASSERT_TRUE(client.ready());
  const auto bytes = read_file_bytes(testing::cornell_tpk());
  wire::Envelope load;
  load.mutable_load_scene()->set_content_hash(hash64(bytes.data(), bytes.size()));
  client.send(load);
  const auto status = client.receive(20s);
  ASSERT_TRUE(status && status->has_scene_status());
  ASSERT_EQ(status->scene_status().state(), wire::SceneStatus::READY);

  const auto request = [&](uint64_t id) {
    wire::Envelope m;
    auto& r = *m.mutable_frame_request();
    r.set_frame_id(id);
    r.set_scene_hash(load.load_scene().content_hash());
    r.mutable_pose()->mutable_position()->set_x(278);
    r.mutable_pose()->mutable_position()->set_y(273);
    r.mutable_pose()->mutable_position()->set_z(-800);
    r.mutable_pose()->mutable_orientation()->set_y(1);
    r.mutable_eyes()->set_layout(wire::Eyes::STEREO);
    r.mutable_eyes()->set_ipd(64);
    r.mutable_projection()->set_vertical_fov_degrees(40);
    r.mutable_image()->set_width(40);
    r.mutable_image()->set_height(24);
    r.mutable_image()->set_tile_size(16);  // 3 x 2 tiles per eye
    r.set_reply(wire::EACH_TILE);
    r.set_encoding(wire::RAW_RGBA8);
    r.mutable_pathtrace()->set_spp(1);
    r.add_tiles(4);
    return m;
  };
  const auto expect_error = [&](wire::Envelope m, wire::ErrorMessage::Code code, const std::string& needle) {
    client.send(m);
    const auto answer = client.receive();
    ASSERT_TRUE(answer && answer->has_error()) << w->log();
    EXPECT_EQ(answer->error().code(), code);
    EXPECT_FALSE(answer->error().fatal());
    EXPECT_NE(answer->error().message().find(needle), std::string::npos) << answer->error().message();
  };
  auto bad = request(1);
  bad.mutable_frame_request()->mutable_pathtrace()->set_spp(0);
  expect_error(bad, wire::ErrorMessage::BAD_REQUEST, "spp");
  bad = request(2);
  bad.mutable_frame_request()->mutable_gaze()->set_x(1.5f);
  expect_error(bad, wire::ErrorMessage::BAD_REQUEST, "gaze");
  bad = request(3);
  bad.mutable_frame_request()->mutable_vct()->set_grid(100);
  expect_error(bad, wire::ErrorMessage::BAD_REQUEST, "100 is not one of 64, 128, 256, 512");
  bad = request(4);
  bad.mutable_frame_request()->clear_mode();
  expect_error(bad, wire::ErrorMessage::UNSUPPORTED_MODE, "render mode");

  client.send(request(5));
  const auto pair = client.receive(20s);
  ASSERT_TRUE(pair && pair->has_tile_batch()) << w->log();
  ASSERT_EQ(pair->tile_batch().tiles_size(), 2);
  const auto& left = pair->tile_batch().tiles(0);
  const auto& right = pair->tile_batch().tiles(1);
  EXPECT_EQ(left.tile_id(), 4u);
  EXPECT_EQ(right.tile_id(), 10u);  // n + t with n = 6
  for (const auto* t : {&left, &right}) {
    EXPECT_EQ(t->x0(), 16u);
    EXPECT_EQ(t->y0(), 16u);
    EXPECT_EQ(t->width(), 16u);
    EXPECT_EQ(t->height(), 8u);
    EXPECT_EQ(t->data().size(), 16u * 8 * 4);
    EXPECT_FLOAT_EQ(t->samples_per_pixel(), 1.0f);
  }
  EXPECT_NE(left.data(), right.data());  // two eyes, two views
  // A pair id beyond one eye's tiles breaks the protocol.
  auto beyond = request(6);
  beyond.mutable_frame_request()->set_tiles(0, 6);
  client.send(beyond);
  EXPECT_TRUE(client.closed_by_peer(10s));
}

TEST(ClusterModes, BadModeOptionsAreOneClearErrorLine) {
  TempDir dir("cluster_modes_cli");
  testing::write_secret(dir / "secret", kSecret);
  const std::string master = testing::master_binary().string() + " --scene " + testing::cornell_tpk().string() + " --secret-file " +
                             (dir / "secret").string() + " --workers 127.0.0.1:1";
  const auto expect_error = [](const std::string& options, const std::string& needle) {
    SCOPED_TRACE(options);
    const auto r = testing::run_command(options);
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.rfind("tessera-master: error: ", 0), 0u) << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  };
  expect_error(master + " --spp 4", "--spp needs --mode pathtrace");
  expect_error(master + " --clamp 3", "--clamp needs --mode pathtrace");
  expect_error(master + " --mode pathtrace --vct-preset 3", "--vct-preset needs --mode vct");
  expect_error(master + " --mode pathtrace --pt-variant fancy", "--pt-variant");
  expect_error(master + " --mode pathtrace --gaze 2,0", "--gaze");
  expect_error(master + " --mode vct --vct-grid 100", "--vct-grid 100");
  expect_error(master + " --mode vct --shadow-cone 20", "--shadow-cone");
  expect_error(master + " --mode vct --vct-output fancy", "--vct-output");
  EXPECT_NE(testing::run_command(testing::master_binary().string() + " --help").output.find("--pt-variant"), std::string::npos);
}

}  // namespace
}  // namespace tessera
