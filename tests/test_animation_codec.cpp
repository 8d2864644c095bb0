// The byte encoding of animations (common/scene/animation_codec.h): a round trip keeps every node,
// channel and pose bit for bit; truncated, extended, mis-versioned, out-of-range and randomly
// corrupted bytes are one tessera::Error or a scene that passed validation, never a crash.
#include <gtest/gtest.h>

#include <random>

#include "animation_test_support.h"
#include "common/base/error.h"
#include "common/scene/animation_codec.h"
#include "common/scene/animation_player.h"
#include "test_helpers.h"

namespace tessera {
namespace {

using namespace tessera::anim;

// Two animations over a three-node hierarchy with a matrix node: every target and interpolation.
AnimatedScene sample_scene() {
  AnimatedScene scene;
  scene.nodes.resize(3);
  scene.nodes[0].rest = {{1, 2, 3}, {0, 0, 0, 1}, {1, 1, 1}};
  scene.nodes[1].parent = 0;
  scene.nodes[1].rest.scale = {2, 2, 2};
  scene.nodes[2].has_matrix = true;
  scene.nodes[2].matrix = {1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 4, 5, 6, 1};
  const float h = std::sqrt(0.5f);
  Animation first{"spin", {}, 0.0f};
  first.channels.push_back({0, Target::rotation, Interpolation::linear, {0.0f, 1.0f}, {0, 0, 0, 1, 0, h, 0, h}});
  first.channels.push_back({1, Target::translation, Interpolation::step, {0.0f, 0.5f, 2.0f}, {0, 0, 0, 1, 1, 1, 2, 2, 2}});
  Animation second{"", {}, 0.0f};
  second.channels.push_back({1, Target::scale, Interpolation::cubic_spline, {0.25f, 3.0f},
                             {0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 2, 2, 2, 0, 0, 0}});
  scene.animations = {first, second};
  validate_animations(scene);
  return scene;
}

TEST(AnimationCodec, RoundTripKeepsEveryValueAndPose) {
  const AnimatedScene scene = sample_scene();
  const std::vector<uint8_t> bytes = encode_animations(scene);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 4), "TANM");
  EXPECT_LT(bytes.size(), 400u);
  const AnimatedScene back = decode_animations(bytes);
  EXPECT_EQ(back.nodes, scene.nodes);
  EXPECT_EQ(back.animations, scene.animations);  // durations derived again, the same
  EXPECT_EQ(back.order, scene.order);
  EXPECT_EQ(back.moves, scene.moves);
  EXPECT_EQ(encode_animations(back), bytes);
  Pose a, b;
  for (double t : {0.0, 0.3, 1.7, 2.9, 11.1}) {
    ASSERT_TRUE(evaluate(scene, t, Playback::loop, a));
    ASSERT_TRUE(evaluate(back, t, Playback::loop, b));
    EXPECT_EQ(a.world, b.world) << t;
  }
}

TEST(AnimationCodec, RoundTripOfTheGeneratedScene) {
  testing::TempDir dir("anim_codec");
  const auto made = testing::run_command("/usr/bin/python3 " + testing::shell_word(testing::source_dir() / "deploy/make-animated-scene") +
                                         " --count 3 --instances 50 --output " + testing::shell_word(dir / "m.gltf"));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const AnimatedScene scene = read_gltf_animations(dir / "m.gltf");
  const std::vector<uint8_t> bytes = encode_animations(scene);
  const AnimatedScene back = decode_animations(bytes);
  EXPECT_EQ(back.nodes, scene.nodes);
  EXPECT_EQ(back.animations, scene.animations);
  // Per moving instance: its node (45 bytes) and 2 channels of 5 keys (~14 + 20 + 60 or 80 bytes each).
  EXPECT_LT(bytes.size(), 50u * 300u + 4000u);
}

std::string decode_error(const std::vector<uint8_t>& bytes) {
  try {
    decode_animations(bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void put_u32(std::vector<uint8_t>& bytes, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + size_t(i)] = uint8_t(v >> (8 * i));
}

TEST(AnimationCodec, RefusesMalformedBytesWithOneError) {
  const std::vector<uint8_t> good = encode_animations(sample_scene());
  EXPECT_EQ(decode_error({}), "animation data ends inside the magic (4 bytes needed, 0 left)");
  auto bytes = good;
  bytes[0] = 'X';
  EXPECT_EQ(decode_error(bytes), "animation data: not Tessera animation data (no TANM magic)");
  bytes = good;
  put_u32(bytes, 4, 2);
  EXPECT_EQ(decode_error(bytes), "animation data: version 2 (this build reads version 1)");
  bytes = good;
  bytes.push_back(0);
  EXPECT_EQ(decode_error(bytes), "animation data: 1 bytes after the last animation");
  bytes = good;
  put_u32(bytes, 8, 0xFFFFFFFFu);  // node count
  EXPECT_EQ(decode_error(bytes), "animation data: 4294967295 nodes (at most 1048576)");
  bytes = good;
  put_u32(bytes, 8, 1000);
  EXPECT_NE(decode_error(bytes).find("1000 nodes cannot fit in the"), std::string::npos);
  // Every truncation is refused.
  for (size_t size = 0; size < good.size(); ++size) {
    const std::vector<uint8_t> cut(good.begin(), good.begin() + long(size));
    EXPECT_NE(decode_error(cut), "") << size;
  }
  // A parent out of range, a NaN key time, a channel for a node that does not exist: the validator's errors.
  bytes = good;
  put_u32(bytes, 12 + 45, 7);  // node 1's parent
  EXPECT_EQ(decode_error(bytes), "node 1 has parent 7 of 3 nodes");
  const size_t animations_at = 12 + 45 + 45 + (4 + 1 + 64);
  const size_t channel_at = animations_at + 4 + 4 + 4 + 4;  // count, name length, "spin", channel count
  bytes = good;
  put_u32(bytes, channel_at, 9);
  EXPECT_EQ(decode_error(bytes), "animation 'spin' (0) channel 0 drives node 9 of 3");
  bytes = good;
  put_u32(bytes, channel_at + 10 + 4, 0x7FC00000u);  // the second key time
  EXPECT_EQ(decode_error(bytes), "animation 'spin' (0) channel 0: key 1 has time nan (times are finite seconds from 0 to 1e+09)");
  bytes = good;
  bytes[channel_at + 5] = 3;  // interpolation
  EXPECT_NE(decode_error(bytes).find("interpolation 3"), std::string::npos);
}

TEST(AnimationCodec, RandomCorruptionNeverCrashes) {
  const std::vector<uint8_t> good = encode_animations(sample_scene());
  std::mt19937 random(1234);
  size_t refused = 0, accepted = 0;
  Pose pose;
  for (int trial = 0; trial < 4000; ++trial) {
    std::vector<uint8_t> bytes = good;
    const int flips = 1 + int(random() % 4);
    for (int f = 0; f < flips; ++f) bytes[random() % bytes.size()] = uint8_t(random());
    if (trial % 7 == 0) bytes.resize(random() % bytes.size());
    try {
      const AnimatedScene scene = decode_animations(bytes);
      ++accepted;  // what decodes is valid: it evaluates
      evaluate(scene, double(trial) * 0.01, Playback::loop, pose);
      for (const Trs& local : pose.local)
        for (float v : local.rotation) EXPECT_TRUE(std::isfinite(v));
    } catch (const Error&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 1000u);
  EXPECT_GT(accepted, 100u);  // flips inside values mostly give other valid scenes
}

}  // namespace
}  // namespace tessera
