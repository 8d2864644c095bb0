// glTF animations (common/scene/gltf_animation.h, animation_player.h): each interpolation against
// values worked out by hand, looping and clamping, the node hierarchy, every kind of bad input as
// one error naming the animation and channel, and the scene deploy/make-animated-scene writes.
#include <gtest/gtest.h>

#include <cmath>

#include "animation_test_support.h"
#include "common/base/error.h"
#include "error_text.h"
#include "common/scene/animation_player.h"
#include "common/scene/gltf_animation.h"
#include "common/scene/mesh_loader.h"
#include "test_helpers.h"

namespace tessera {
namespace {

using namespace tessera::anim;
using testing::AnimatedGltf;
using testing::TempDir;

Channel make_channel(Target target, Interpolation interpolation, std::vector<float> times, std::vector<float> values) {
  Channel c;
  c.target = target;
  c.interpolation = interpolation;
  c.times = std::move(times);
  c.values = std::move(values);
  return c;
}

std::array<float, 4> sample(const Channel& channel, double t) {
  std::array<float, 4> out{};
  sample_channel(channel, t, out.data());
  return out;
}

using testing::error_of;

constexpr float kEps = 1e-6f;

TEST(GltfAnimation, StepHoldsEachKeyUntilTheNext) {
  const Channel c = make_channel(Target::translation, Interpolation::step, {0.5f, 1.0f, 2.0f}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(sample(c, 0.0)[0], 1.0f);   // before the first key: the first value
  EXPECT_EQ(sample(c, 0.75)[0], 1.0f);
  EXPECT_EQ(sample(c, 1.0)[1], 5.0f);   // exactly on a key: that key
  EXPECT_EQ(sample(c, 1.999)[2], 6.0f);
  EXPECT_EQ(sample(c, 2.0)[0], 7.0f);
  EXPECT_EQ(sample(c, 50.0)[2], 9.0f);  // after the last key: the last value
}

TEST(GltfAnimation, LinearInterpolatesBetweenKeys) {
  const Channel c = make_channel(Target::scale, Interpolation::linear, {1.0f, 3.0f}, {1, 2, -4, 3, 4, 4});
  const auto v = sample(c, 1.5);  // a quarter of the way
  EXPECT_NEAR(v[0], 1.5f, kEps);
  EXPECT_NEAR(v[1], 2.5f, kEps);
  EXPECT_NEAR(v[2], -2.0f, kEps);
  EXPECT_EQ(sample(c, 3.0)[2], 4.0f);
}

TEST(GltfAnimation, LinearRotationSlerpsAlongTheShorterArc) {
  const float h = std::sqrt(0.5f);  // 90 degrees about y: (0, sin 45, 0, cos 45)
  const Channel c = make_channel(Target::rotation, Interpolation::linear, {0.0f, 1.0f}, {0, 0, 0, 1, 0, h, 0, h});
  const auto half = sample(c, 0.5), quarter = sample(c, 0.25);
  EXPECT_NEAR(half[1], std::sin(float(M_PI) / 8), kEps);  // 45 degrees: half angle 22.5
  EXPECT_NEAR(half[3], std::cos(float(M_PI) / 8), kEps);
  EXPECT_NEAR(quarter[1], std::sin(float(M_PI) / 16), kEps);  // slerp, not lerp: 22.5 degrees exactly
  EXPECT_NEAR(quarter[3], std::cos(float(M_PI) / 16), kEps);
  // -q is the same rotation: the far key negated and scaled by 3 changes nothing (short arc, normalized).
  const Channel negated = make_channel(Target::rotation, Interpolation::linear, {0.0f, 1.0f}, {0, 0, 0, 1, 0, -3 * h, 0, -3 * h});
  const auto same = sample(negated, 0.25);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(same[size_t(i)], quarter[size_t(i)], kEps) << i;
  // Nearly equal keys fall back to a normalized lerp and stay unit length.
  const Channel close = make_channel(Target::rotation, Interpolation::linear, {0.0f, 1.0f}, {0, 0, 0, 1, 0, 0.001f, 0, 1});
  const auto n = sample(close, 0.5);
  EXPECT_NEAR(n[1] * n[1] + n[3] * n[3], 1.0f, kEps);
  EXPECT_NEAR(n[1], 0.0005f, 1e-6f);
}

TEST(GltfAnimation, CubicSplineIsTheSpecsHermiteWithTangentsScaledByTheInterval) {
  // Keys at 1 s and 3 s (interval 2). Per key: in-tangent, value, out-tangent. Key 0's in-tangent and
  // key 1's out-tangent never matter (huge here to show it).
  const Channel c = make_channel(Target::translation, Interpolation::cubic_spline, {1.0f, 3.0f},
                                 {1000, 1000, 1000, /*v0*/ 0, 10, 0, /*b0*/ 2, 0, 1,  //
                                  /*a1*/ 6, 0, 0, /*v1*/ 4, 20, 0, -1000, -1000, -1000});
  // s = 0.5: h00 = h01 = 0.5, h10 = 0.125, h11 = -0.125; x = 2*0.125*2 + 0.5*4 + 2*(-0.125)*6 = 1.
  const auto mid = sample(c, 2.0);
  EXPECT_NEAR(mid[0], 1.0f, kEps);
  EXPECT_NEAR(mid[1], 15.0f, kEps);
  EXPECT_NEAR(mid[2], 0.25f, kEps);
  // s = 0.25: h00 = 0.84375, h10 = 0.140625, h01 = 0.15625, h11 = -0.046875.
  const auto early = sample(c, 1.5);
  EXPECT_NEAR(early[0], 0.5625f + 0.625f - 0.5625f, kEps);
  EXPECT_NEAR(early[1], 8.4375f + 3.125f, kEps);
  EXPECT_NEAR(early[2], 0.28125f, kEps);
  EXPECT_EQ(sample(c, 0.0)[1], 10.0f);  // outside the keys: the values, not the tangents
  EXPECT_EQ(sample(c, 9.0)[1], 20.0f);
}

TEST(GltfAnimation, CubicSplineRotationsComeOutNormalized) {
  const float h = std::sqrt(0.5f);
  const Channel c = make_channel(Target::rotation, Interpolation::cubic_spline, {0.0f, 2.0f},
                                 {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,  //
                                  0, 0, 0, 0, 0, h, 0, h, 0, 0, 0, 0});
  const auto q = sample(c, 1.0);  // zero tangents: the normalized average, 45 degrees about y
  EXPECT_NEAR(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1.0f, kEps);
  EXPECT_NEAR(q[1], std::sin(float(M_PI) / 8), kEps);
  EXPECT_NEAR(q[3], std::cos(float(M_PI) / 8), kEps);
}

AnimatedScene one_node_scene(Channel channel) {
  AnimatedScene scene;
  scene.nodes.resize(1);
  scene.animations.push_back({"a", {std::move(channel)}, 0.0f});
  validate_animations(scene);
  return scene;
}

TEST(GltfAnimation, LoopsOverItsOwnDurationOrClamps) {
  const AnimatedScene scene =
      one_node_scene(make_channel(Target::translation, Interpolation::linear, {0.0f, 4.0f}, {0, 0, 0, 8, 0, 0}));
  const Animation& a = scene.animations[0];
  EXPECT_EQ(a.duration, 4.0f);
  EXPECT_DOUBLE_EQ(animation_time(a, 5.0, Playback::loop), 1.0);
  EXPECT_DOUBLE_EQ(animation_time(a, 8.5, Playback::loop), 0.5);
  EXPECT_DOUBLE_EQ(animation_time(a, 4.0, Playback::loop), 0.0);  // the end is the next start
  EXPECT_DOUBLE_EQ(animation_time(a, -1.0, Playback::loop), 3.0);
  EXPECT_DOUBLE_EQ(animation_time(a, 5.0, Playback::clamp), 4.0);
  EXPECT_DOUBLE_EQ(animation_time(a, -1.0, Playback::clamp), 0.0);
  Pose p1, p2;
  ASSERT_TRUE(evaluate(scene, 1.0, Playback::loop, p1));
  ASSERT_TRUE(evaluate(scene, 401.0, Playback::loop, p2));
  EXPECT_EQ(p1.world, p2.world);  // bit for bit
  EXPECT_FLOAT_EQ(p1.world[0][12], 2.0f);
  ASSERT_TRUE(evaluate(scene, 401.0, Playback::clamp, p2));
  EXPECT_FLOAT_EQ(p2.world[0][12], 8.0f);
  Playback mode;
  EXPECT_TRUE(parse_playback("clamp", &mode));
  EXPECT_EQ(mode, Playback::clamp);
  EXPECT_FALSE(parse_playback("bounce", &mode));
}

TEST(GltfAnimation, HierarchyComposesParentsFirstAndMarksWhatMoves) {
  AnimatedScene scene;
  scene.nodes.resize(4);
  scene.nodes[0].parent = 1;  // the child comes before its parent in the file
  scene.nodes[0].rest.translation = {1, 0, 0};
  scene.nodes[0].rest.scale = {2, 2, 2};
  const float h = std::sqrt(0.5f);
  scene.nodes[1].rest.translation = {10, 0, 0};
  scene.nodes[1].rest.rotation = {0, 0, h, h};  // 90 degrees about z: x -> y
  scene.nodes[2].has_matrix = true;             // a static matrix parent
  scene.nodes[2].matrix = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 5, 1};
  scene.nodes[3].parent = 2;
  scene.animations.push_back(
      {"slide", {make_channel(Target::translation, Interpolation::linear, {0.0f, 1.0f}, {10, 0, 0, 20, 0, 0})}, 0.0f});
  scene.animations[0].channels[0].node = 1;
  validate_animations(scene);
  EXPECT_EQ(scene.moves, (std::vector<uint8_t>{1, 1, 0, 0}));
  ASSERT_EQ(scene.order.size(), 4u);
  EXPECT_LT(std::find(scene.order.begin(), scene.order.end(), 1u), std::find(scene.order.begin(), scene.order.end(), 0u));

  Pose pose;
  ASSERT_TRUE(evaluate(scene, 0.0, Playback::clamp, pose));
  auto origin = testing::world_origin(pose, 0);
  EXPECT_NEAR(origin[0], 10.0f, kEps);  // (1, 0, 0) turned to (0, 1, 0), then moved by (10, 0, 0)
  EXPECT_NEAR(origin[1], 1.0f, kEps);
  EXPECT_NEAR(pose.world[0][0], 0.0f, kEps);  // the child's x axis: scaled by 2, turned onto y
  EXPECT_NEAR(pose.world[0][1], 2.0f, kEps);
  EXPECT_NEAR(testing::world_origin(pose, 3)[2], 5.0f, kEps);
  ASSERT_TRUE(evaluate(scene, 0.5, Playback::clamp, pose));
  origin = testing::world_origin(pose, 0);
  EXPECT_NEAR(origin[0], 15.0f, kEps);  // the parent's channel carries the child
  EXPECT_NEAR(pose.local[1].translation[0], 15.0f, kEps);
  EXPECT_EQ(pose.local[0], scene.nodes[0].rest);
  // Evaluating again into the same pose reuses its storage.
  const auto* world = pose.world.data();
  ASSERT_TRUE(evaluate(scene, 0.75, Playback::clamp, pose));
  EXPECT_EQ(pose.world.data(), world);
}

TEST(GltfAnimation, OverflowingNestedScalesAreReportedNotReturnedAsPoses) {
  AnimatedScene scene;
  scene.nodes.resize(4);
  for (int n = 0; n < 4; ++n) {
    scene.nodes[size_t(n)].parent = n - 1;
    scene.nodes[size_t(n)].rest.scale = {1e14f, 1e14f, 1e14f};
  }
  validate_animations(scene);
  Pose pose;
  EXPECT_FALSE(evaluate(scene, 0.0, Playback::loop, pose));
}

// ---- bad input: a valid base file, changed in one place per case ----

struct BaseFile {
  AnimatedGltf gltf;
  int times = 0, values = 0;
  BaseFile() {
    gltf.node({{"children", {1}}});
    gltf.node({{"translation", {1, 2, 3}}});
    times = gltf.accessor({0, 1, 2}, "SCALAR");
    values = gltf.accessor({0, 0, 0, 1, 1, 1, 2, 2, 2}, "VEC3");
    gltf.channel(0, 1, "translation", "LINEAR", times, values);
    gltf.json["animations"][0]["name"] = "bad";
  }
};

std::string load_error(AnimatedGltf& gltf) {
  TempDir dir("anim_bad");
  const auto path = gltf.write(dir / "bad.gltf");
  return error_of([&] { read_gltf_animations(path); });
}

TEST(GltfAnimation, TheBaseOfTheBadInputCasesLoads) {
  BaseFile base;
  TempDir dir("anim_base");
  const AnimatedScene scene = read_gltf_animations(base.gltf.write(dir / "base.gltf"));
  ASSERT_EQ(scene.animations.size(), 1u);
  EXPECT_EQ(scene.animations[0].name, "bad");
  EXPECT_EQ(scene.nodes[1].parent, 0);
  EXPECT_EQ(scene.nodes[1].rest.translation, (std::array<float, 3>{1, 2, 3}));
  EXPECT_TRUE(scene.warnings.empty());
}

TEST(GltfAnimation, BadKeyTimesAreOneErrorNamingTheChannel) {
  const auto with_times = [](std::vector<float> times) {
    BaseFile base;
    base.gltf.accessor(times, "SCALAR");
    base.gltf.json["animations"][0]["samplers"][0]["input"] = base.gltf.json["accessors"].size() - 1;
    return load_error(base.gltf);
  };
  std::string e = with_times({0, NAN, 2});
  EXPECT_NE(e.find("bad.gltf: animation 'bad' (0) channel 0 input"), std::string::npos) << e;
  EXPECT_NE(e.find("non-finite"), std::string::npos) << e;
  e = with_times({0, INFINITY, 2});
  EXPECT_NE(e.find("non-finite"), std::string::npos) << e;
  e = with_times({0, 1, 1});
  EXPECT_NE(e.find("animation 'bad' (0) channel 0: key times are not increasing (key 2"), std::string::npos) << e;
  e = with_times({0, 2, 1});
  EXPECT_NE(e.find("not increasing"), std::string::npos) << e;
  e = with_times({-1, 1, 2});
  EXPECT_NE(e.find("key 0 has time -1"), std::string::npos) << e;
}

TEST(GltfAnimation, BadValuesCountsAndAccessorTypesAreOneError) {
  {
    BaseFile base;  // a NaN value
    base.gltf.json["animations"][0]["samplers"][0]["output"] = base.gltf.accessor({0, 0, 0, 1, NAN, 1, 2, 2, 2}, "VEC3");
    const std::string e = load_error(base.gltf);
    EXPECT_NE(e.find("channel 0 output"), std::string::npos) << e;
    EXPECT_NE(e.find("non-finite"), std::string::npos) << e;
  }
  {
    BaseFile base;  // 3 key times, 2 values
    base.gltf.json["animations"][0]["samplers"][0]["output"] = base.gltf.accessor({0, 0, 0, 1, 1, 1}, "VEC3");
    const std::string e = load_error(base.gltf);
    EXPECT_NE(e.find("channel 0: 3 key times but 2 output elements"), std::string::npos) << e;
  }
  {
    BaseFile base;  // cubic spline needs 3 values a key
    base.gltf.json["animations"][0]["samplers"][0]["interpolation"] = "CUBICSPLINE";
    const std::string e = load_error(base.gltf);
    EXPECT_NE(e.find("3 key times but 3 output elements (CUBICSPLINE needs 3 a key)"), std::string::npos) << e;
  }
  {
    BaseFile base;  // rotation from a VEC3 accessor
    base.gltf.json["animations"][0]["channels"][0]["target"]["path"] = "rotation";
    const std::string e = load_error(base.gltf);
    EXPECT_NE(e.find("channel 0 output: accessor 1 has 3 components per element, expected 4"), std::string::npos) << e;
  }
  {
    BaseFile base;  // integer key times
    base.gltf.json["accessors"][0]["componentType"] = 5125;
    const std::string e = load_error(base.gltf);
    EXPECT_NE(e.find("channel 0 input: accessor 0 has component type 5125, expected float"), std::string::npos) << e;
  }
  {
    BaseFile base;  // a zero rotation key
    base.gltf.json["animations"][0]["samplers"][0]["output"] = base.gltf.accessor({0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}, "VEC4");
    base.gltf.json["animations"][0]["channels"][0]["target"]["path"] = "rotation";
    const std::string e = load_error(base.gltf);
    EXPECT_NE(e.find("channel 0: key 1 is a zero rotation quaternion"), std::string::npos) << e;
  }
}

TEST(GltfAnimation, BadTargetsSamplersAndInterpolationsAreOneError) {
  const auto changed = [](auto&& change) {
    BaseFile base;
    change(base.gltf.json["animations"][0]);
    return load_error(base.gltf);
  };
  std::string e = changed([](auto& a) { a["channels"][0]["target"]["node"] = 7; });
  EXPECT_NE(e.find("animation 'bad' (0) channel 0 drives node 7 of 2"), std::string::npos) << e;
  e = changed([](auto& a) { a["channels"][0]["sampler"] = 3; });
  EXPECT_NE(e.find("channel 0 names sampler 3 of 1"), std::string::npos) << e;
  e = changed([](auto& a) { a["samplers"][0]["interpolation"] = "SMOOTH"; });
  EXPECT_NE(e.find("channel 0: unknown interpolation 'SMOOTH'"), std::string::npos) << e;
  e = changed([](auto& a) { a["channels"].push_back(a["channels"][0]); });
  EXPECT_NE(e.find("channel 1: a second channel for node 1 translation"), std::string::npos) << e;
  e = changed([](auto& a) { a["samplers"][0]["input"] = 40; });
  EXPECT_NE(e.find("channel 0 input: accessor 40 does not exist"), std::string::npos) << e;
  {
    BaseFile base;  // a channel may not drive a matrix node
    base.gltf.json["nodes"][1] = {{"matrix", {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}}};
    e = load_error(base.gltf);
    EXPECT_NE(e.find("channel 0 drives node 1, which has a matrix"), std::string::npos) << e;
  }
  {
    BaseFile base;  // more keys than the limit: refused from the count, before anything is read
    base.gltf.json["accessors"][0]["count"] = kMaxKeysPerChannel + 1;
    e = load_error(base.gltf);
    EXPECT_NE(e.find("channel 0 has 1048577 keys (at most 1048576)"), std::string::npos) << e;
  }
  {
    BaseFile base;  // a cubic spline of one key
    base.gltf.json["accessors"][0]["count"] = 1;
    base.gltf.json["animations"][0]["samplers"][0]["interpolation"] = "CUBICSPLINE";
    e = load_error(base.gltf);
    EXPECT_NE(e.find("channel 0 has 1 keys (CUBICSPLINE needs 2)"), std::string::npos) << e;
  }
}

TEST(GltfAnimation, WeightsChannelsAreIgnoredWithAWarning) {
  BaseFile base;
  base.gltf.channel(0, 0, "weights", "LINEAR", base.times, base.times);
  TempDir dir("anim_weights");
  const AnimatedScene scene = read_gltf_animations(base.gltf.write(dir / "w.gltf"));
  ASSERT_EQ(scene.animations[0].channels.size(), 1u);
  ASSERT_EQ(scene.warnings.size(), 1u);
  EXPECT_EQ(scene.warnings[0], "animation 'bad' (0) channel 1 animates morph-target weights, which are not supported (ignored)");
}

TEST(GltfAnimation, LimitsAndBrokenHierarchiesAreOneError) {
  AnimatedScene many;  // more channels than the limit, over two animations
  many.nodes.resize(1);
  many.animations.resize(2);
  many.animations[0].channels.assign(1, make_channel(Target::scale, Interpolation::step, {0.0f}, {1, 1, 1}));
  many.animations[1].name = "many";
  many.animations[1].channels.assign(kMaxChannels, many.animations[0].channels[0]);
  EXPECT_EQ(error_of([&] { validate_animations(many); }), "animation 'many' (1): the scene has more than 65536 animation channels");

  AnimatedScene deep;  // a chain of kMaxNodeDepth + 1 nodes
  deep.nodes.resize(anim::kMaxNodeDepth + 1);  // anim's limit: tessera:: has its own (scene_nodes.h)
  for (size_t n = 1; n < deep.nodes.size(); ++n) deep.nodes[n].parent = int32_t(n - 1);
  EXPECT_EQ(error_of([&] { validate_animations(deep); }), "the node hierarchy is deeper than 1024");
  deep.nodes.pop_back();
  EXPECT_EQ(error_of([&] { validate_animations(deep); }), "");

  AnimatedScene cycle;
  cycle.nodes.resize(3);
  cycle.nodes[1].parent = 2;
  cycle.nodes[2].parent = 1;
  EXPECT_EQ(error_of([&] { validate_animations(cycle); }), "node 1 is in a cycle of parents");
  cycle.nodes[2].parent = 5;
  EXPECT_EQ(error_of([&] { validate_animations(cycle); }), "node 2 has parent 5 of 3 nodes");
}

// ---- deploy/make-animated-scene ----

TEST(GltfAnimation, GeneratedSceneLoadsStaticAndAnimatesInsideSponza) {
  TempDir dir("anim_asset");
  const std::string script = testing::shell_word(testing::source_dir() / "deploy/make-animated-scene");
  const auto made = testing::run_command("/usr/bin/python3 " + script + " --count 3 --instances 20 --seconds 2 --output " +
                                         testing::shell_word(dir / "moving.gltf"));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const auto path = dir / "moving.gltf";

  // The static pose packs as any glTF: 2 cubes, a sphere, the child sphere and 20 small spheres.
  const TriangleMesh mesh = load_mesh(path, {});
  EXPECT_EQ(mesh.triangle_count(), 2 * 432u + 528u + 224u + 20 * 120u);
  for (const std::string& warning : mesh.warnings) EXPECT_NE(warning.find("animations"), std::string::npos) << warning;

  const AnimatedScene scene = read_gltf_animations(path);
  EXPECT_TRUE(scene.warnings.empty());
  ASSERT_EQ(scene.animations.size(), 2u);
  EXPECT_EQ(scene.animations[0].channels.size(), 3u * 3u + 1u);  // 3 channels an object, and the child's
  EXPECT_EQ(scene.animations[1].channels.size(), 2u * 20u);
  EXPECT_FLOAT_EQ(scene.animations[0].duration, 2.0f);
  int kinds[3][3] = {};  // target x interpolation
  for (const Channel& c : scene.animations[0].channels) ++kinds[int(c.target)][int(c.interpolation)];
  for (int t = 0; t < 3; ++t)
    for (int i = 0; i < 3; ++i) EXPECT_GE(kinds[t][i], 1) << target_name(Target(t)) << " " << interpolation_name(Interpolation(i));
  EXPECT_EQ(std::count(scene.moves.begin(), scene.moves.end(), 1), long(scene.nodes.size()));

  // At time 0 (and every loop) the pose is the file's rest pose.
  Pose pose, again;
  ASSERT_TRUE(evaluate(scene, 0.0, Playback::loop, pose));
  for (size_t n = 0; n < scene.nodes.size(); ++n) {
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(pose.local[n].translation[size_t(i)], scene.nodes[n].rest.translation[size_t(i)], 1e-3f) << n;
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(pose.local[n].rotation[size_t(i)], scene.nodes[n].rest.rotation[size_t(i)], 1e-6f) << n;
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(pose.local[n].scale[size_t(i)], scene.nodes[n].rest.scale[size_t(i)], 1e-6f) << n;
  }
  ASSERT_TRUE(evaluate(scene, 6.0, Playback::loop, again));
  EXPECT_EQ(pose.world, again.world);
  // Object 1 (LINEAR translation; placed 0.13 of the spread towards +z) a quarter in: lifted by 0.6 of
  // its size, swayed by 0.4 in z.
  ASSERT_TRUE(evaluate(scene, 0.5, Playback::loop, pose));
  const uint32_t object1 = 2;  // node 1 is object 0's child
  EXPECT_NEAR(pose.local[object1].translation[1], 250.0f + 60.0f, 1e-3f);
  EXPECT_NEAR(pose.local[object1].translation[2], 156.0f + 40.0f, 1e-3f);
  // Everything stays inside Crytek Sponza's bounds the whole loop.
  for (double t = 0.0; t < 2.0; t += 0.05) {
    ASSERT_TRUE(evaluate(scene, t, Playback::loop, pose));
    for (size_t n = 0; n < scene.nodes.size(); ++n) {
      const auto o = testing::world_origin(pose, n);
      EXPECT_TRUE(o[0] > -1800 && o[0] < 1700 && o[1] > 0 && o[1] < 1300 && o[2] > -1100 && o[2] < 1000)
          << "node " << n << " at t " << t << ": " << o[0] << "," << o[1] << "," << o[2];
    }
  }
}

// The benchmark's scene: a still room (an OBJ) beside the moving objects, and instances of a given mesh.
TEST(GltfAnimation, GeneratorTakesAStillRoomAndTheInstancesMeshFromObjFiles) {
  TempDir dir("anim_room");
  const std::string script = "/usr/bin/python3 " + testing::shell_word(testing::source_dir() / "deploy/make-animated-scene");
  const std::string cornell = testing::shell_word(testing::scene_path("cornell_box/cornell_box.obj"));
  const std::string teapot = testing::shell_word(testing::scene_path("teapot/teapot_lowpoly.obj"));
  const auto made = testing::run_command(script + " --count 1 --instances 3 --static-obj " + cornell + " --instance-obj " + teapot +
                                         " --output " + testing::shell_word(dir / "room.gltf"));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const size_t room = load_mesh(testing::scene_path("cornell_box/cornell_box.obj"), {}).triangle_count();
  const size_t pot = load_mesh(testing::scene_path("teapot/teapot_lowpoly.obj"), {}).triangle_count();
  EXPECT_EQ(load_mesh(dir / "room.gltf", {}).triangle_count(), room + 432u + 224u + 3 * pot);  // the cube, its child, 3 pots
  const AnimatedScene scene = read_gltf_animations(dir / "room.gltf");
  EXPECT_EQ(scene.nodes.size(), 1u + 2u + 3u);
  const auto missing = testing::run_command(script + " --count 1 --static-obj " + testing::shell_word(dir / "gone.obj") +
                                            " --output " + testing::shell_word(dir / "x.gltf"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(std::count(missing.output.begin(), missing.output.end(), '\n'), 1) << missing.output;
  EXPECT_NE(missing.output.find("make-animated-scene: error: cannot read --static-obj"), std::string::npos) << missing.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.gltf"));
}

TEST(GltfAnimation, GeneratorRefusesBadOptionsInOneLine) {
  TempDir dir("anim_options");
  const std::string script = "/usr/bin/python3 " + testing::shell_word(testing::source_dir() / "deploy/make-animated-scene");
  const std::string out = " --output " + testing::shell_word(dir / "x.gltf");
  for (const std::string& options : {std::string(" --count 0 --instances 0"), std::string(" --seconds nan"), std::string(" --count 65"),
                                     std::string(" --center 1,2")}) {
    const auto result = testing::run_command(script + options + out);
    EXPECT_EQ(result.exit_code, 2) << options;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
    EXPECT_TRUE(result.output.starts_with("make-animated-scene: error: ")) << result.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "x.gltf"));
}

TEST(GltfAnimation, FilesWithoutAnimationsGiveTheirStaticNodes) {
  const AnimatedScene scene = read_gltf_animations(testing::source_dir() / "tests/data/gltf/transforms.gltf");
  EXPECT_TRUE(scene.animations.empty());
  EXPECT_FALSE(scene.nodes.empty());
  EXPECT_EQ(std::count(scene.moves.begin(), scene.moves.end(), 1), 0);
}

}  // namespace
}  // namespace tessera
