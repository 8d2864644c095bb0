// SceneMotion (common/scene/scene_motion.h): a packed instanced scene posed at a scene time traces
// like the scene packed with its nodes baked at that time, a moved instance like the object packed
// in its place, transforms are refused with one error, and the top level is rebuilt only on change.
#include <gtest/gtest.h>

#include <cmath>

#include "common/base/error.h"
#include "common/base/usage_error.h"
#include "instanced_pack_support.h"
#include "test_helpers.h"

namespace tessera::testing {
namespace {

// Two cubes: node 0 still, node 1 moving (translation LINEAR, rotation LINEAR, scale STEP), or at
// `baked` (its rest TRS) with no animation.
std::filesystem::path write_moving(const std::filesystem::path& path, const anim::Trs* baked) {
  AnimatedGltf gltf;
  const int cube = add_cube_mesh(gltf, 1.0f);
  gltf.node({{"mesh", cube}});
  if (baked) {
    gltf.node({{"mesh", cube},
               {"translation", {baked->translation[0], baked->translation[1], baked->translation[2]}},
               {"rotation", {baked->rotation[0], baked->rotation[1], baked->rotation[2], baked->rotation[3]}},
               {"scale", {baked->scale[0], baked->scale[1], baked->scale[2]}}});
  } else {
    const int node = gltf.node({{"mesh", cube}, {"translation", {3.0, 0.0, 0.0}}});
    const int times = gltf.accessor({0.0f, 1.0f, 2.0f}, "SCALAR");
    gltf.channel(0, node, "translation", "LINEAR", times, gltf.accessor({3, 0, 0, 3, 2, 0, 3, 0, 1}, "VEC3"));
    gltf.channel(0, node, "rotation", "LINEAR", times,
                 gltf.accessor({0, 0, 0, 1, 0, 0.70710678f, 0, 0.70710678f, 0, 0, 0, 1}, "VEC4"));
    gltf.channel(0, node, "scale", "STEP", times, gltf.accessor({1, 1, 1, 1.5f, 0.5f, 1, 1, 1, 1}, "VEC3"));
  }
  add_default_scene(gltf);
  return gltf.write(path);
}

void expect_same_hits(const std::vector<TracedHit>& a, const std::vector<TracedHit>& b, int min_hits) {
  ASSERT_EQ(a.size(), b.size());
  int hits = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].found, b[i].found) << "ray " << i;
    if (!a[i].found) continue;
    ++hits;
    EXPECT_EQ(std::bit_cast<uint32_t>(a[i].t), std::bit_cast<uint32_t>(b[i].t)) << "ray " << i;
    EXPECT_EQ(a[i].corners, b[i].corners) << "ray " << i;
    EXPECT_EQ(a[i].instance, b[i].instance) << "ray " << i;
  }
  EXPECT_GE(hits, min_hits);
}

Transform3x4 translation(float x, float y, float z) {
  Transform3x4 t;
  t.m[3] = x, t.m[7] = y, t.m[11] = z;
  return t;
}

TEST(SceneMotion, ATimeTracesLikeTheNodesBakedAtThatTime) {
  TempDir dir("motion_time");
  pack::pack_scene(instanced_pack_options(write_moving(dir / "moving.gltf", nullptr), dir / "moving.tpk"));
  const PackedScene moving = PackedScene::load(dir / "moving.tpk");
  auto motion = SceneMotion::of_scene(moving, "moving.tpk");
  ASSERT_TRUE(motion && motion->animated());
  EXPECT_DOUBLE_EQ(motion->duration(), 2.0);
  for (const double t : {0.0, 0.7, 1.25, 3.6}) {  // 3.6 loops to 1.6
    motion->set_time(t);
    anim::Pose pose;
    ASSERT_TRUE(anim::evaluate(moving.scene_nodes(), t, anim::Playback::loop, pose));
    pack::pack_scene(instanced_pack_options(write_moving(dir / "baked.gltf", &pose.local[1]), dir / "baked.tpk"));
    const PackedScene baked = PackedScene::load(dir / "baked.tpk");
    auto still = SceneMotion::of_scene(baked, "baked.tpk");
    ASSERT_FALSE(still->animated());
    EXPECT_EQ(motion->instances()[1].world, still->instances()[1].world) << "t " << t;
    const auto rays = rays_around(motion->top_level().bounds, 1500);
    expect_same_hits(trace_instanced(moving, *motion, rays), trace_instanced(baked, *still, rays), 300);
  }
}

TEST(SceneMotion, AMovedInstanceTracesLikeTheObjectPackedInItsPlace) {
  TempDir dir("motion_moved");
  anim::Trs there;
  there.translation = {6.0f, 1.0f, -0.5f};
  there.rotation = {0.0f, 0.0f, 0.38268343f, 0.92387953f};
  pack::pack_scene(instanced_pack_options(write_moving(dir / "there.gltf", &there), dir / "there.tpk"));
  pack::pack_scene(instanced_pack_options(write_moving(dir / "moving.gltf", nullptr), dir / "moving.tpk"));
  const PackedScene packed_there = PackedScene::load(dir / "there.tpk"), moving = PackedScene::load(dir / "moving.tpk");
  auto reference = SceneMotion::of_scene(packed_there, "there.tpk");
  auto motion = SceneMotion::of_scene(moving, "moving.tpk");
  motion->set_time(0.4);
  const Transform3x4 place = reference->instances()[1].world;
  motion->set_instance_transform(1, place);
  EXPECT_TRUE(motion->has_instance_transform(1));
  const auto rays = rays_around(reference->top_level().bounds, 1500);
  expect_same_hits(trace_instanced(moving, *motion, rays), trace_instanced(packed_there, *reference, rays), 300);
  motion->set_time(1.1);  // the animation moves the others; the grabbed one stays
  EXPECT_EQ(motion->instances()[1].world, place);
  motion->clear_instance_transform(1);
  EXPECT_NE(motion->instances()[1].world, place);
}

TEST(SceneMotion, ChangedOnlyWhenSomethingMoved) {
  TempDir dir("motion_changed");
  pack::pack_scene(instanced_pack_options(write_moving(dir / "moving.gltf", nullptr), dir / "moving.tpk"));
  const PackedScene scene = PackedScene::load(dir / "moving.tpk");
  auto motion = SceneMotion::of_scene(scene, "moving.tpk");
  EXPECT_TRUE(motion->changed());  // never built
  motion->top_level();
  EXPECT_FALSE(motion->changed());
  EXPECT_EQ(motion->rebuilds(), 1u);
  motion->set_time(0.0);
  EXPECT_FALSE(motion->changed());
  motion->set_time(0.5);
  EXPECT_TRUE(motion->changed());
  motion->top_level();
  motion->top_level();
  EXPECT_EQ(motion->rebuilds(), 2u);
  motion->set_instance_transform(0, Transform3x4::identity());  // where it is already
  EXPECT_FALSE(motion->changed());
  motion->set_instance_transform(0, translation(0, 0, 1));
  EXPECT_TRUE(motion->changed());
}

TEST(SceneMotion, RefusedTransformsAreOneErrorAndChangeNothing) {
  TempDir dir("motion_refused");
  pack::pack_scene(instanced_pack_options(write_moving(dir / "moving.gltf", nullptr), dir / "moving.tpk"));
  const PackedScene scene = PackedScene::load(dir / "moving.tpk");
  auto motion = SceneMotion::of_scene(scene, "moving.tpk");
  motion->top_level();
  Transform3x4 flat = Transform3x4::identity();
  flat.m[5] = 0.0f;
  Transform3x4 nan = Transform3x4::identity();
  nan.m[3] = NAN;
  auto message = [&](const Transform3x4& t, uint32_t index) {
    try {
      motion->set_instance_transform(index, t);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message(flat, 1), "instance 1: transform has scale 0 (the object would be flat)");
  EXPECT_EQ(message(nan, 0), "instance 0: transform has a NaN or infinite entry");
  EXPECT_EQ(message(Transform3x4::identity(), 2), "instance 2: no such instance (the scene has 2)");
  EXPECT_FALSE(motion->changed());
  EXPECT_FALSE(motion->has_instance_transform(1));
  EXPECT_THROW(motion->set_time(NAN), Error);
  EXPECT_EQ(motion->time(), 0.0);
}

TEST(SceneMotion, SingleLevelScenesHaveNoMotion) {
  TempDir dir("motion_single");
  write_text(dir / "a.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  auto options = instanced_pack_options(dir / "a.obj", dir / "a.tpk");
  options.instances = false;
  pack::pack_scene(options);
  EXPECT_FALSE(SceneMotion::of_scene(PackedScene::load(dir / "a.tpk"), "a.tpk").has_value());
}

TEST(SceneMotion, InstanceTransformArgument) {
  const InstanceTransform t = parse_instance_transform("3:1,0,0,5,0,2,0,0,0,0,1,-1.5");
  EXPECT_EQ(t.index, 3u);
  EXPECT_EQ(t.world.m[3], 5.0f);
  EXPECT_EQ(t.world.m[5], 2.0f);
  EXPECT_EQ(t.world.m[11], -1.5f);
  EXPECT_THROW(parse_instance_transform("3:1,0,0,5"), UsageError);
  EXPECT_THROW(parse_instance_transform("x:1,0,0,0,0,1,0,0,0,0,1,0"), UsageError);
  EXPECT_THROW(parse_instance_transform("1:1,0,0,0,0,0,0,0,0,0,1,0"), UsageError);  // scale 0
  EXPECT_THROW(parse_instance_transform("1:1,0,0,nan,0,1,0,0,0,0,1,0"), UsageError);
}

}  // namespace
}  // namespace tessera::testing
