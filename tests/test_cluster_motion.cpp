// Things that move through the cluster: tessera-master with two tessera-worker processes (host
// backend) renders an animated instanced scene at the scene times its clock gives, and every frame
// equals tessera-render --time T pixel for pixel, raytraced, path-traced and in the vct mode; a live
// session's grabbed instance equals tessera-render --instance-transform.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cluster_test_support.h"
#include "live_test_support.h"
#include "two_cubes_scene.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
using testing::WorkerProcess;

// Looking down -z at both cubes (x -0.5..5.5) from 8 units away.
constexpr const char* kPose = "2.5,0.5,8,1,0,0,0";
constexpr const char* kSize = "64x48";

struct MotionCluster {
  TempDir dir{"cluster_motion"};
  std::filesystem::path secret = dir / "secret", scenes = dir / "scenes";
  std::filesystem::path tpk;
  MotionCluster() {
    testing::write_secret(secret, testing::kClusterSecret);
    std::filesystem::create_directories(scenes);
    tpk = testing::pack_two_cubes(dir.path());
  }
  std::unique_ptr<WorkerProcess> worker(const std::string& name) {
    auto w = std::make_unique<WorkerProcess>(dir.path(), name, scenes, secret);
    EXPECT_FALSE(w->address().empty()) << w->log();
    return w;
  }
  ImageRgba8 reference(const std::string& name, const std::string& options) {
    const auto out = dir / (name + ".png");
    const auto r = testing::run_command(testing::render_binary().string() + " " + tpk.string() + " --pose " + kPose + " --fov 50 --size " +
                                        kSize + " --device host " + options + " -o " + out.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return read_image(out);
  }
};

TEST(ClusterMotion, FramesAtTheirSceneTimeEqualTesseraRenderTime) {
  MotionCluster c;
  auto a = c.worker("a"), b = c.worker("b");
  // Poses 1 s apart at half speed from 0.25 s: frames at 0.25, 0.75 and 1.25 s.
  testing::write_text(c.dir / "poses.csv", std::string("0,") + kPose + "\n1," + kPose + "\n2," + kPose + "\n");
  for (const char* schedule : {"static", "dynamic"}) {
    SCOPED_TRACE(schedule);
    const auto out = c.dir / schedule;
    const auto r = testing::run_command("timeout 60 " + testing::master_binary().string() + " --workers " + a->address() + "," + b->address() +
                                        " --scene " + c.tpk.string() + " --secret-file " + c.secret.string() + " --no-status --size " + kSize +
                                        " --tile 16 --fov 50 --schedule " + schedule + " --poses " + (c.dir / "poses.csv").string() +
                                        " --scene-time 0.25 --time-scale 0.5 --out " + out.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const char* times[] = {"0.25", "0.75", "1.25"};
    for (int i = 0; i < 3; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "frame_%06d.png", i);
      const ImageRgba8 frame = read_image(out / name);
      const ImageRgba8 reference = c.reference(std::string("t") + times[i], std::string("--time ") + times[i]);
      EXPECT_TRUE(frame.pixels().size() == reference.pixels().size() &&
                  std::equal(frame.pixels().begin(), frame.pixels().end(), reference.pixels().begin()))
          << "frame " << i << " at " << times[i] << " s";
    }
    // The cube moved between them: the frames show different instants.
    EXPECT_FALSE(read_image(out / "frame_000000.png").pixels().size() == 0);
    const auto first = read_image(out / "frame_000000.png"), second = read_image(out / "frame_000001.png");
    EXPECT_FALSE(std::equal(first.pixels().begin(), first.pixels().end(), second.pixels().begin()));
  }
}

// The vct mode: each worker's grid follows the frames' instants (updated where the cube moved, from the
// previous frame's placement), tessera-render's is voxelized as packed and moved to T once; the frames
// are the same pixels.
TEST(ClusterMotion, VctFramesAtTheirSceneTimeEqualTesseraRenderTime) {
  MotionCluster c;
  auto a = c.worker("a"), b = c.worker("b");
  testing::write_text(c.dir / "poses.csv", std::string("0,") + kPose + "\n1," + kPose + "\n2," + kPose + "\n");
  const std::string vct = " --mode vct --vct-grid 64 --vct-preset 4";
  const auto out = c.dir / "vct";
  const auto r = testing::run_command("timeout 90 " + testing::master_binary().string() + " --workers " + a->address() + "," + b->address() +
                                      " --scene " + c.tpk.string() + " --secret-file " + c.secret.string() + " --no-status --size " + kSize +
                                      " --tile 16 --fov 50 --schedule dynamic --poses " + (c.dir / "poses.csv").string() +
                                      " --scene-time 0.25 --time-scale 0.5 --out " + out.string() + vct);
  ASSERT_EQ(r.exit_code, 0) << r.output << a->log();
  const char* times[] = {"0.25", "0.75", "1.25"};
  for (int i = 0; i < 3; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "frame_%06d.png", i);
    const ImageRgba8 frame = read_image(out / name);
    const ImageRgba8 reference = c.reference(std::string("vct_t") + times[i], std::string("--time ") + times[i] + vct);
    EXPECT_TRUE(frame.pixels().size() == reference.pixels().size() &&
                std::equal(frame.pixels().begin(), frame.pixels().end(), reference.pixels().begin()))
        << "frame " << i << " at " << times[i] << " s";
  }
  const auto first = read_image(out / "frame_000000.png"), second = read_image(out / "frame_000001.png");
  EXPECT_FALSE(std::equal(first.pixels().begin(), first.pixels().end(), second.pixels().begin()));
}

// The pathtrace mode at a fixed seed: an instant where something moved restarts the accumulation of
// every tile, so such a frame holds the samples of its own instant alone, as tessera-render's; an
// instant that places every instance as the last did (the cube slides there and back: 0.75 s and
// 1.25 s put it at x = 4.5) keeps adding samples, as a held pose does. Static schedule: each worker
// keeps its tiles from frame to frame.
TEST(ClusterMotion, PathtracedFramesAtTheirSceneTimeEqualTesseraRenderTime) {
  MotionCluster c;
  auto a = c.worker("a"), b = c.worker("b");
  testing::write_text(c.dir / "poses.csv", std::string("0,") + kPose + "\n1," + kPose + "\n2," + kPose + "\n");
  const std::string pt = " --mode pathtrace --pt-variant plain --tile 16";
  const auto out = c.dir / "pathtrace";
  const auto r = testing::run_command("timeout 60 " + testing::master_binary().string() + " --workers " + a->address() + "," + b->address() +
                                      " --scene " + c.tpk.string() + " --secret-file " + c.secret.string() + " --no-status --size " + kSize +
                                      " --fov 50 --schedule static --poses " + (c.dir / "poses.csv").string() +
                                      " --scene-time 0.25 --time-scale 0.5 --out " + out.string() + pt + " --spp 2");
  ASSERT_EQ(r.exit_code, 0) << r.output << a->log();
  const char* times[] = {"0.25", "0.75", "1.25"};
  const char* spp[] = {"2", "2", "4"};
  for (int i = 0; i < 3; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "frame_%06d.png", i);
    const ImageRgba8 frame = read_image(out / name);
    const ImageRgba8 reference =
        c.reference(std::string("pt") + times[i], pt + " --spp " + spp[i] + " --time " + times[i]);
    EXPECT_EQ(frame, reference) << "frame " << i << " at " << times[i] << " s, " << spp[i] << " samples a pixel";
  }
  EXPECT_NE(read_image(out / "frame_000000.png"), read_image(out / "frame_000001.png"));
}

// A live session: a page grabs the sliding cube and puts it 1 up; the frame the master composited
// (--reference-frames writes it raw) equals tessera-render --time T --instance-transform.
TEST(ClusterMotion, AGrabbedInstanceEqualsTesseraRenderInstanceTransform) {
  using namespace testing::live;
  TempDir scenes("cluster_motion_live");
  const auto tpk = testing::pack_two_cubes(scenes.path());
  const auto frames = scenes.path() / "frames";
  std::filesystem::create_directories(frames);
  LiveMaster m({"--max-samples", "1", "--time-scale", "0", "--scene-time", "0.5", "--fov", "50", "--reference-frames", frames.string() + ":1"},
               {"--device", "host", "--threads", "1"}, false, {}, tpk);
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  const json pose = {{"type", "pose"}, {"id", 1}, {"t", 10}, {"position", {2.5, 0.5, 8}}, {"orientation", {1, 0, 0, 0}}};
  d.send_text(pose.dump());
  ASSERT_TRUE(frame_of_pose(d, 1)) << m.log();
  d.send_text(R"({"type":"move","instance":1,"transform":[1,0,0,4, 0,1,0,1, 0,0,1,0]})");
  std::optional<json> status;
  while ((status = next_text(d, "status", 10s)) && (*status)["moved"].empty()) {
  }
  ASSERT_TRUE(status) << m.log();
  // The same view again, as a new pose: its frame opens after the move (messages of one page are
  // taken in order), so it shows the cube where it was put.
  json again = pose;
  again["id"] = 2;
  again["t"] = 20;
  d.send_text(again.dump());
  const auto newest = frame_of_pose(d, 2);
  ASSERT_TRUE(newest) << m.log();
  const auto ppm = frames / ("frame-" + std::to_string(newest->header["frame"].get<uint64_t>()) + ".ppm");
  ASSERT_TRUE(std::filesystem::exists(ppm)) << ppm;
  const ImageRgba8 shown = read_image(ppm);
  const auto out = scenes.path() / "grabbed.png";
  const auto r = testing::run_command(testing::render_binary().string() + " " + tpk.string() + " --pose " + kPose + " --fov 50 --size " + kSize +
                                      " --device host --time 0.5 --instance-transform 1:1,0,0,4,0,1,0,1,0,0,1,0 -o " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const ImageRgba8 reference = read_image(out);
  ASSERT_EQ(shown.width(), reference.width());
  ASSERT_EQ(shown.height(), reference.height());
  // RGB (a PPM has no alpha).
  size_t differing = 0;
  for (size_t i = 0; i < reference.pixels().size(); ++i)
    if (i % 4 != 3 && shown.pixels()[i] != reference.pixels()[i]) ++differing;
  EXPECT_EQ(differing, 0u);
  // ... and not the cube where its animation has it.
  const auto still = scenes.path() / "still.png";
  ASSERT_EQ(testing::run_command(testing::render_binary().string() + " " + tpk.string() + " --pose " + kPose + " --fov 50 --size " + kSize +
                                 " --device host --time 0.5 -o " + still.string())
                .exit_code,
            0);
  const ImageRgba8 animated = read_image(still);
  EXPECT_FALSE(std::equal(animated.pixels().begin(), animated.pixels().end(), reference.pixels().begin()));
}

}  // namespace
}  // namespace tessera
