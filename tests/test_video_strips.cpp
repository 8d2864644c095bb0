// Strip-parallel video (common/video/video_strips.h): the layout, strips that decode to the raw
// frame, a key frame that resets every strip, and the strip table a receiver checks; end to end, a
// master's strips decoded by tessera-live-client's PageDecoder (a malformed table refused).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/base/file_io.h"
#include "common/base/task_pool.h"
#include "common/image/metrics.h"
#include "common/video/video_strips.h"
#include "live_test_support.h"
#include "master/live/page_decoder.h"

namespace tessera {
namespace {

ImageRgba8 strip_test_picture(int width, int height, int shift) {
  ImageRgba8 image(width, height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const int u = x + shift;
      const bool box = (u / 24 + y / 20) % 2 == 0;
      image.set(x, y, {uint8_t(40 + 150 * u / (width + 64)), uint8_t(box ? 180 : 70), uint8_t(60 + 120 * y / height), 255});
    }
  return image;
}

TEST(VideoStrips, LayoutCoversThePictureInRowsOfSixteen) {
  const auto layout = video::strip_layout(1024, 8);
  ASSERT_EQ(layout.size(), 8u);
  for (size_t i = 0; i < layout.size(); ++i) {
    EXPECT_EQ(layout[i].y, int(i) * 128);
    EXPECT_EQ(layout[i].height, 128);
  }
  const auto odd = video::strip_layout(270, 4);  // 68 rounds up to 80: 80, 80, 80, 30
  ASSERT_EQ(odd.size(), 4u);
  EXPECT_EQ(odd.back().y + odd.back().height, 270);
  for (size_t i = 0; i + 1 < odd.size(); ++i) EXPECT_EQ(odd[i].height % 16, 0);
  EXPECT_EQ(video::strip_layout(32, 8).size(), 2u);  // short pictures get fewer strips
  EXPECT_EQ(video::strip_count_for(1024, 16), 8);
  EXPECT_EQ(video::strip_count_for(1024, 2), 2);
  EXPECT_EQ(video::strip_count_for(96, 16), 1);
}

// Each codec's strips decode, frame by frame, to within the whole-frame stream's stated PSNR.
TEST(VideoStrips, StripsDecodeCloseToTheRawFrames) {
  TaskPool pool(2);
  for (video::Codec codec : {video::Codec::h264, video::Codec::vp9}) {
    SCOPED_TRACE(std::string(video::codec_name(codec)));
    video::StripEncoder encoder(codec, {192, 128, 5, 60, 1}, 4, pool);
    ASSERT_EQ(encoder.layout().size(), 4u);
    video::StripDecoder decoder(codec, 1, pool);
    for (int i = 0; i < 5; ++i) {
      const ImageRgba8 raw = strip_test_picture(192, 128, 2 * i);
      const video::StripFrame frame = encoder.encode(video::rgba_to_i420(raw), false);
      EXPECT_EQ(frame.key, i == 0) << "frame " << i;
      ASSERT_EQ(frame.strips.size(), 4u);
      EXPECT_FALSE(video::strip_table_error(frame.strips, 128, frame.bytes.size()));
      const ImageRgba8 shown = video::i420_to_rgba(decoder.decode(frame.bytes, frame.strips, 192, 128));
      EXPECT_GT(psnr_rgb(raw, shown), 32.0) << "frame " << i;
    }
  }
}

// A key frame is a key frame in every strip: a receiver that starts there decodes every strip.
TEST(VideoStrips, AKeyFrameResetsEveryStrip) {
  TaskPool pool(2);
  video::StripEncoder encoder(video::Codec::h264, {128, 96, 3, 60, 1}, 3, pool);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(encoder.encode(video::rgba_to_i420(strip_test_picture(128, 96, 2 * i)), false).key, i == 0);
  const video::StripFrame key = encoder.encode(video::rgba_to_i420(strip_test_picture(128, 96, 6)), true);
  EXPECT_TRUE(key.key);
  for (const auto& strip : key.strips) EXPECT_TRUE(strip.key);
  video::StripDecoder fresh(video::Codec::h264, 1, pool);
  EXPECT_GT(psnr_rgb(strip_test_picture(128, 96, 6), video::i420_to_rgba(fresh.decode(key.bytes, key.strips, 128, 96))), 30.0);
  const video::StripFrame next = encoder.encode(video::rgba_to_i420(strip_test_picture(128, 96, 8)), false);
  EXPECT_FALSE(next.key);
  EXPECT_NO_THROW(fresh.decode(next.bytes, next.strips, 128, 96));
}

TEST(VideoStrips, AMalformedStripTableIsRefusedWithItsReason) {
  using video::EncodedStrip;
  const std::vector<EncodedStrip> good = {{{0, 64}, 0, 10, true}, {{64, 32}, 10, 5, true}};
  EXPECT_FALSE(video::strip_table_error(good, 96, 15));
  EXPECT_TRUE(video::strip_table_error({}, 96, 15));
  EXPECT_TRUE(video::strip_table_error(good, 96, 16));   // bytes left over
  EXPECT_TRUE(video::strip_table_error(good, 128, 15));  // rows left over
  auto gap = good;
  gap[1].rows.y = 80;
  EXPECT_TRUE(video::strip_table_error(gap, 96, 15));
  auto overlap = good;
  overlap[1].offset = 4;
  EXPECT_TRUE(video::strip_table_error(overlap, 96, 15));
  auto past_end = good;
  past_end[1].bytes = 1000;
  EXPECT_TRUE(video::strip_table_error(past_end, 96, 15));
  auto misaligned = good;
  misaligned[0].rows.height = 60;
  misaligned[1] = {{60, 36}, 10, 5, true};
  EXPECT_TRUE(video::strip_table_error(misaligned, 96, 15));
  EXPECT_TRUE(video::strip_table_error(std::vector<EncodedStrip>(65, {{0, 16}, 0, 1, true}), 65 * 16, 65));
}

// A master streaming H.264 in three strips to a client: every frame's table is as PROTOCOL.md says,
// the strips decode to within 30 dB of the raw frame, a keyframe request makes every strip a key
// frame, and a frame whose table is tampered with is refused (a reason and a key frame request, no crash).
TEST(LiveVideoStrips, StripsDecodeToTheRawFrameAndABadTableIsRefused) {
  using namespace master::live;
  using namespace testing::live;
  using nlohmann::json;
  testing::TempDir refs("live_strips_refs");
  LiveMaster m({"--codec", "h264", "--video-strips", "3", "--reference-frames", refs.path().string() + ":1", "--max-samples", "1"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient c = m.connect();
  c.send_text(R"({"type":"hello","want":"drive","client":"desktop","decoders":["h264"]})");
  ASSERT_TRUE(next_text(c, "session")) << m.log();
  c.send_text(R"({"type":"settings","size":[96,96]})");
  PageDecoder decoder;
  uint64_t id = 0;
  std::optional<FrameMessage> last;
  for (int i = 0; i < 12; ++i) {
    c.send_text(pose_message(++id, {278.0f + float(i) * 4, 273, -800}).dump());
    auto f = frame_of_pose(c, id);
    ASSERT_TRUE(f && f->video) << m.log();
    const json video = f->header["video"];
    if (video["coded_height"] != 96) continue;  // a frame from before the resize
    ASSERT_EQ(video["strips"].size(), 3u) << video.dump();
    const auto result = decoder.decode(*f, true);
    ASSERT_TRUE(result.decoded) << video.dump();
    const std::string ppm = read_file_text(refs / ("frame-" + std::to_string(f->header["frame"].get<uint64_t>()) + ".ppm"));
    ImageRgba8 raw(96, 96);
    const size_t start = ppm.size() - 96 * 96 * 3;
    for (size_t p = 0; p < 96 * 96; ++p)
      for (size_t k = 0; k < 3; ++k) raw.pixels()[p * 4 + k] = uint8_t(ppm[start + p * 3 + k]);
    EXPECT_GT(psnr_rgb(raw, *result.image), 30.0);
    last = std::move(f);
  }
  ASSERT_TRUE(last) << m.log();
  c.send_text(R"({"type":"keyframe","reason":"test"})");
  c.send_text(pose_message(++id, {330, 273, -800}).dump());
  const auto key = frame_of_pose(c, id);
  ASSERT_TRUE(key && key->video);
  EXPECT_TRUE(key->header["video"]["key"].get<bool>());
  for (const auto& strip : key->header["video"]["strips"]) EXPECT_TRUE(strip["key"].get<bool>()) << strip.dump();
  EXPECT_TRUE(decoder.decode(*key, false).decoded);
  FrameMessage bad = *key;
  bad.header["video"]["strips"][1]["offset"] = 0;  // overlaps the first strip
  const auto refused = decoder.decode(bad, false);
  EXPECT_FALSE(refused.decoded);
  ASSERT_TRUE(refused.refused);
  EXPECT_NE(refused.refused->find("strip table refused"), std::string::npos) << *refused.refused;
  EXPECT_TRUE(refused.keyframe_reason);
  bad.header["video"]["strips"] = "three";
  EXPECT_TRUE(decoder.decode(bad, false).refused);
}

}  // namespace
}  // namespace tessera
