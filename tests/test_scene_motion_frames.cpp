// Things that move, frame by frame: a worker reads a frame request's scene time and instance
// transforms (worker/daemon/frame_motion.h) and refuses bad ones with one error; posing a scene for a
// frame says whether anything moved; the master's picker (master/session/scene_picker.h) names the
// instance a ray meets first at the clock's time, grabbed instances where they were put.
#include <gtest/gtest.h>

#include <cmath>

#include "common/base/error.h"
#include "instanced_pack_support.h"
#include "master/cluster/scene_file.h"
#include "master/session/scene_picker.h"
#include "test_helpers.h"
#include "two_cubes_scene.h"
#include "worker/daemon/frame_motion.h"

namespace tessera::testing {
namespace {

wire::FrameRequest request_at(double time, std::initializer_list<std::pair<uint32_t, std::vector<float>>> placed = {}) {
  wire::FrameRequest r;
  r.set_scene_time_s(time);
  for (const auto& [instance, matrix] : placed) {
    auto& t = *r.add_instance_transforms();
    t.set_instance(instance);
    for (float v : matrix) t.add_matrix(v);
  }
  return r;
}

const std::vector<float> kShifted = {1, 0, 0, 0, 0, 1, 0, 4, 0, 0, 1, 0};  // 4 up

TEST(FrameMotion, RequestsAreReadAndBadOnesRefusedWithOneError) {
  const auto motion = worker::frame_motion(request_at(1.5, {{1, kShifted}}), 2);
  EXPECT_EQ(motion.time_s, 1.5);
  ASSERT_EQ(motion.placed.size(), 1u);
  EXPECT_EQ(motion.placed[0].first, 1u);
  EXPECT_EQ(motion.placed[0].second.m[7], 4.0f);
  EXPECT_EQ(worker::frame_motion(wire::FrameRequest(), 0), worker::FrameMotion());  // an older master's request: time 0, nothing placed

  const auto refused = [](const wire::FrameRequest& r, uint32_t instances) -> std::string {
    try {
      worker::frame_motion(r, instances);
    } catch (const Error& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(refused(request_at(std::nan("")), 2), "scene_time_s must be a finite number of seconds within 1e9 of 0");
  EXPECT_EQ(refused(request_at(2e9), 2), "scene_time_s must be a finite number of seconds within 1e9 of 0");
  EXPECT_EQ(refused(request_at(0, {{2, kShifted}}), 2), "instance 2: the scene has 2 instances");
  EXPECT_EQ(refused(request_at(0, {{0, kShifted}}), 0), "instance 0: the scene has 0 instances");
  EXPECT_EQ(refused(request_at(0, {{1, {1, 0, 0}}}), 2), "instance 1: 3 matrix entries, not 12");
  EXPECT_EQ(refused(request_at(0, {{1, {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0}}}), 2),
            "instance 1: transform has scale 0 (the object would be flat)");
  EXPECT_EQ(refused(request_at(0, {{1, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, std::nanf("")}}}), 2),
            "instance 1: transform has a NaN or infinite entry");
}

TEST(FrameMotion, PosingAFrameSaysWhetherAnythingMoved) {
  TempDir dir("frame_motion");
  const PackedScene scene = PackedScene::load(pack_two_cubes(dir.path()));
  auto motion = SceneMotion::of_scene(scene, "cubes.tpk");
  ASSERT_TRUE(motion);
  motion->top_level();
  EXPECT_FALSE(worker::pose_scene(*motion, worker::frame_motion(request_at(0), 2)));  // as packed
  EXPECT_TRUE(worker::pose_scene(*motion, worker::frame_motion(request_at(0.5), 2)));
  motion->top_level();
  EXPECT_FALSE(worker::pose_scene(*motion, worker::frame_motion(request_at(0.5), 2)));  // the same instant again
  EXPECT_TRUE(worker::pose_scene(*motion, worker::frame_motion(request_at(0.5, {{0, kShifted}}), 2)));
  motion->top_level();
  EXPECT_FALSE(worker::pose_scene(*motion, worker::frame_motion(request_at(0.5, {{0, kShifted}}), 2)));  // placed again: no change
  EXPECT_TRUE(worker::pose_scene(*motion, worker::frame_motion(request_at(0.5), 2)));  // let go: back to its place
  EXPECT_EQ(motion->instances()[0].world, Transform3x4::identity());
}

TEST(ScenePicker, NamesTheInstanceARayMeetsAtTheClocksTimeAndWhereItWasPut) {
  TempDir dir("scene_picker");
  const auto file = master::SceneFile::load(pack_two_cubes(dir.path()));
  EXPECT_EQ(file->instances, 2u);
  EXPECT_TRUE(file->animated);
  EXPECT_DOUBLE_EQ(file->duration_s, 2.0);
  master::ScenePicker picker(*file);
  ASSERT_EQ(picker.instance_count(), 2u);
  const std::array<float, 3> down{0, -1, 0};
  // At 0 s the sliding cube is at x = 3, at 1 s at x = 5.
  auto hit = picker.pick({3, 10, 0}, down, 0.0, {});
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->instance, 1u);
  EXPECT_NEAR(hit->distance, 9.5f, 1e-3f);  // the cube's top face, half a unit above its centre
  EXPECT_NEAR(hit->point[1], 0.5f, 1e-3f);
  EXPECT_EQ(hit->world.m[3], 3.0f);
  EXPECT_FALSE(picker.pick({3, 10, 0}, down, 1.0, {}));  // it slid away
  hit = picker.pick({5, 10, 0}, down, 1.0, {});
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->instance, 1u);
  EXPECT_NEAR(hit->world.m[3], 5.0f, 1e-5f);
  hit = picker.pick({0, 10, 0}, down, 1.0, {});
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->instance, 0u);
  // Grabbed and put 4 up: found there, with the transform it was given.
  Transform3x4 up;
  up.m[7] = 4;
  hit = picker.pick({0, 10, 0}, down, 1.0, {{0, up}});
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->instance, 0u);
  EXPECT_NEAR(hit->point[1], 4.5f, 1e-3f);
  EXPECT_EQ(hit->world, up);
  EXPECT_FALSE(picker.pick({0, 10, 0}, {0, 1, 0}, 1.0, {}));  // looking away
}

}  // namespace
}  // namespace tessera::testing
