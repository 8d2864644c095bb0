// Video streams of the live session (master/web/PROTOCOL.md, "Video streams"): the codecs on their
// own (each stream decodes close to the raw frame, key frames when asked), the rate controller on
// scripted reports, the hello's decoders, and a master with two host workers streaming H.264 to a
// LiveClient over loopback (key frames on a new page, a request and a resize; JPEG without decoders).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/base/file_io.h"
#include "common/base/usage_error.h"
#include "common/image/metrics.h"
#include "common/video/video_decoder.h"
#include "common/video/video_encoder.h"
#include "live_test_support.h"
#include "master/live/client_messages.h"
#include "master/live/frame_message.h"
#include "master/live/page_decoder.h"
#include "master/live/page_stream.h"
#include "master/live/rate_controller.h"
#include "master/live/stream_options.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;
using namespace master::live;
using nlohmann::json;
using testing::TempDir;
using namespace testing::live;

// A smooth scene with edges that moves `shift` pixels a frame: what a renderer's frames look like
// to an encoder, in small. Even shifts keep the hard edges on the 4:2:0 chroma grid (an odd one
// costs every codec alike some 3 dB in the conversion alone).
ImageRgba8 test_picture(int width, int height, int shift) {
  ImageRgba8 image(width, height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const int u = x + shift;
      const bool box = (u / 24 + y / 24) % 2 == 0;
      image.set(x, y, {uint8_t(40 + 150 * u / (width + 64)), uint8_t(box ? 180 : 70), uint8_t(60 + 120 * y / height), 255});
    }
  return image;
}

// ---- codecs ----

TEST(VideoCodecs, ColourConversionRoundTripsClosely) {
  const ImageRgba8 image = test_picture(64, 48, 0);
  const ImageRgba8 back = video::i420_to_rgba(video::rgba_to_i420(image));
  EXPECT_GT(psnr_rgb(image, back), 35.0);  // 4:2:0 and limited range cost a little at the edges
}

// Every codec's stream decodes, frame by frame, to within its stated PSNR of the raw frames
// (docs/streaming.md): at 5 Mbit/s for 192x128 (about 10 KB a frame) each keeps above 32 dB.
TEST(VideoCodecs, EachStreamDecodesCloseToTheRawFrames) {
  for (video::Codec codec : {video::Codec::h264, video::Codec::vp9, video::Codec::av1}) {
    SCOPED_TRACE(std::string(video::codec_name(codec)));
    video::EncoderSettings settings;
    settings.width = 192;
    settings.height = 128;
    settings.bitrate_mbit = 5;
    settings.threads = 2;
    auto encoder = video::make_video_encoder(codec, settings);
    auto decoder = video::make_video_decoder(codec, 2);
    for (int i = 0; i < 6; ++i) {
      const ImageRgba8 raw = test_picture(192, 128, 2 * i);
      const video::EncodedFrame frame = encoder->encode(video::rgba_to_i420(raw), false);
      EXPECT_EQ(frame.key, i == 0) << "frame " << i;  // the first only: no periodic key frames
      const ImageRgba8 shown = video::i420_to_rgba(decoder->decode(frame.bytes));
      EXPECT_GT(psnr_rgb(raw, shown), 32.0) << "frame " << i;
    }
  }
}

TEST(VideoCodecs, KeyFrameWhenAskedDecodesOnItsOwn) {
  for (video::Codec codec : {video::Codec::h264, video::Codec::vp9, video::Codec::av1}) {
    SCOPED_TRACE(std::string(video::codec_name(codec)));
    video::EncoderSettings settings{128, 96, 3, 60, 2};
    auto encoder = video::make_video_encoder(codec, settings);
    for (int i = 0; i < 3; ++i) encoder->encode(video::rgba_to_i420(test_picture(128, 96, 2 * i)), false);
    encoder->set_bitrate(2);  // AV1 takes it at the key frame: both work
    const video::EncodedFrame key = encoder->encode(video::rgba_to_i420(test_picture(128, 96, 6)), true);
    EXPECT_TRUE(key.key);
    auto fresh = video::make_video_decoder(codec, 1);  // a page that comes now: the key frame alone
    const ImageRgba8 shown = video::i420_to_rgba(fresh->decode(key.bytes));
    EXPECT_GT(psnr_rgb(test_picture(128, 96, 6), shown), 30.0);
    const video::EncodedFrame next = encoder->encode(video::rgba_to_i420(test_picture(128, 96, 8)), false);
    EXPECT_FALSE(next.key);
    EXPECT_NO_THROW(fresh->decode(next.bytes));
  }
}

TEST(VideoCodecs, ADeltaFrameWithoutItsReferencesIsAnError) {
  video::EncoderSettings settings{128, 96, 3, 60, 2};
  auto encoder = video::make_h264_encoder(settings);
  encoder->encode(video::rgba_to_i420(test_picture(128, 96, 0)), false);
  const auto delta = encoder->encode(video::rgba_to_i420(test_picture(128, 96, 5)), false);
  PageDecoder page;
  FrameMessage message = unpack_frame_message(pack_video_frame_message(
      {{"type", "frame"}, {"frame", 2}, {"eyes", 1}, {"width", 128}, {"height", 96},
       {"video", {{"codec", "h264"}, {"key", false}, {"seq", 1}}}},
      delta.bytes));
  const auto result = page.decode(message, false);
  EXPECT_FALSE(result.decoded);  // no key frame yet: nothing to show, wait for it
}

// ---- rate control ----

TEST(RateControl, QueueingLowersTheRateAndScaleAndRecoveryRaisesThemResolutionFirst) {
  RateController rate(RateOptions{});
  using Clock = RateController::Clock;
  auto t = Clock::now();
  EXPECT_DOUBLE_EQ(rate.bitrate_mbit(), 30);
  // Frames at 60 Hz whose network+queue time reaches 80 ms (five intervals): the link is behind.
  for (int i = 0; i < 30; ++i) {
    t += 16ms;
    rate.acknowledged(80, 16.7, t);
  }
  const double lowered = rate.bitrate_mbit();
  EXPECT_LT(lowered, 15.0);
  for (int i = 0; i < 200; ++i) {
    t += 16ms;
    rate.acknowledged(80, 16.7, t);
  }
  EXPECT_DOUBLE_EQ(rate.scale(), 0.5);  // far below the floor: half the resolution
  EXPECT_GE(rate.bitrate_mbit(), 2.0);
  // The link keeps up: 2 ms. The resolution comes back first (0.75 after about 2 s), the rate rises.
  const double bottom = rate.bitrate_mbit();
  for (int i = 0; i < 150; ++i) {
    t += 16ms;
    rate.acknowledged(2, 16.7, t);
  }
  EXPECT_DOUBLE_EQ(rate.scale(), 0.75);
  EXPECT_GT(rate.bitrate_mbit(), bottom);
  for (int i = 0; i < 1500; ++i) {
    t += 16ms;
    rate.acknowledged(2, 16.7, t);
  }
  EXPECT_DOUBLE_EQ(rate.scale(), 1.0);
  EXPECT_DOUBLE_EQ(rate.bitrate_mbit(), 80.0);  // up to the cap, no further
  // A socket that keeps a frame waiting also counts as queueing.
  t += 1s;
  rate.socket_behind(t);
  EXPECT_LT(rate.bitrate_mbit(), 80.0);
  EXPECT_GT(rate.bitrate_for(true), rate.bitrate_for(false));  // refinements: a higher rate
}

TEST(RateControl, AFixedBitrateNeverMoves) {
  RateController rate(parse_stream_bitrate("12.5"));
  auto t = RateController::Clock::now();
  for (int i = 0; i < 100; ++i) rate.acknowledged(500, 16.7, t += 16ms);
  EXPECT_DOUBLE_EQ(rate.bitrate_mbit(), 12.5);
  EXPECT_DOUBLE_EQ(rate.scale(), 1.0);
  EXPECT_THROW(parse_stream_bitrate("fast"), UsageError);
  EXPECT_THROW(parse_stream_bitrate("0"), UsageError);
  EXPECT_TRUE(parse_stream_bitrate("auto").automatic);
}

// ---- what a page asks for ----

TEST(RateControl, AFramesBudgetNeverGrowsWhenFramesComeLate) {
  // The bitrate is spread over 72 frames a second (a headset's rate) or over more when frames come
  // faster; a stream at 10 frames a second gets no larger frames than one at 72.
  EXPECT_DOUBLE_EQ(frame_rate_for_budget(1000.0 / 10), 72);
  EXPECT_DOUBLE_EQ(frame_rate_for_budget(1000.0 / 72), 72);
  EXPECT_NEAR(frame_rate_for_budget(1000.0 / 120), 120, 1e-9);
  EXPECT_DOUBLE_EQ(frame_rate_for_budget(0), 240);
}

TEST(VideoHello, DecodersAreCheckedAndChooseTheStream) {
  auto hello = [](const std::string& decoders) { return std::get<Hello>(parse_client_message(R"({"type":"hello","decoders":)" + decoders + "}")); };
  EXPECT_EQ(hello(R"(["vp9","h264"])").decoders, (std::vector<video::Codec>{video::Codec::vp9, video::Codec::h264}));
  EXPECT_FALSE(hello(R"(["vp9","h264"])").decoders_refused);
  for (const char* bad : {R"("h264")", R"(["h265"])", R"(["h264",3])", R"(["h264","h264","h264","h264","h264","h264","h264","h264","h264"])"}) {
    const Hello h = hello(bad);
    EXPECT_TRUE(h.decoders_refused) << bad;
    EXPECT_TRUE(h.decoders.empty()) << bad;
  }
  EXPECT_EQ(choose_stream_codec("auto", {video::Codec::av1, video::Codec::vp9, video::Codec::h264}), video::Codec::h264);
  EXPECT_EQ(choose_stream_codec("auto", {video::Codec::av1}), video::Codec::av1);
  EXPECT_EQ(choose_stream_codec("auto", {}), std::nullopt);
  EXPECT_EQ(choose_stream_codec("vp9", {video::Codec::h264}), std::nullopt);  // the page cannot decode it: JPEG
  EXPECT_EQ(choose_stream_codec("jpeg", {video::Codec::h264}), std::nullopt);
  EXPECT_EQ(std::get<KeyframeRequest>(parse_client_message(R"({"type":"keyframe","reason":"decode error"})")).reason, "decode error");
  EXPECT_THROW(parse_client_message(R"({"type":"keyframe","reason":7})"), ProtocolError);
}

// ---- end to end: master, two host workers, a client over loopback ----

LiveClient video_page(LiveMaster& m, const std::string& decoders, json* session = nullptr) {
  LiveClient c = m.connect();
  c.send_text(R"({"type":"hello","want":"drive","client":"desktop","decoders":)" + decoders + "}");
  const auto s = next_text(c, "session");
  EXPECT_TRUE(s) << m.log();
  if (s && session) *session = *s;
  return c;
}

json video_of(const FrameMessage& f) { return f.header.value("video", json()); }

TEST(LiveVideo, H264StreamKeyFramesOnNewPageRequestAndResizeAndDecodesCloseToTheRawFrames) {
  TempDir refs("live_video_refs");
  LiveMaster m({"--codec", "auto", "--reference-frames", refs.path().string() + ":1", "--max-samples", "1"});
  ASSERT_NE(m.port, 0) << m.log();
  json session;
  LiveClient c = video_page(m, R"(["h264"])", &session);
  EXPECT_EQ(session["codec"], "h264");
  EXPECT_TRUE(session["stream"]["auto"].get<bool>());
  PageDecoder decoder;
  uint64_t id = 0;
  auto next = [&](float x) {
    c.send_text(pose_message(++id, {278.0f + x, 273, -800}).dump());
    auto f = frame_of_pose(c, id);
    EXPECT_TRUE(f) << m.log();
    return f;
  };
  std::vector<json> videos;
  for (int i = 0; i < 4; ++i) {
    const auto f = next(float(i) * 5);
    ASSERT_TRUE(f);
    ASSERT_TRUE(f->video) << f->header.dump();
    EXPECT_TRUE(f->bands.empty());
    videos.push_back(video_of(*f));
    const auto result = decoder.decode(*f, true);
    ASSERT_TRUE(result.decoded) << f->header.dump();
    EXPECT_FALSE(result.keyframe_reason);
    const auto raw = read_file_text(refs / ("frame-" + std::to_string(f->header["frame"].get<uint64_t>()) + ".ppm"));
    EXPECT_GT(raw.size(), 64u * 48 * 3);
  }
  EXPECT_TRUE(videos[0]["key"].get<bool>());
  EXPECT_EQ(videos[0]["seq"], 0);
  EXPECT_EQ(videos[0]["codec_string"], "avc1.640033");
  EXPECT_EQ(videos[0]["coded_width"], 64);
  EXPECT_EQ(videos[0]["coded_height"], 48);
  for (size_t i = 1; i < videos.size(); ++i) {
    EXPECT_FALSE(videos[i]["key"].get<bool>()) << i;  // never periodically
    EXPECT_EQ(videos[i]["seq"].get<uint64_t>(), videos[i - 1]["seq"].get<uint64_t>() + 1);
  }
  // A page's request: the next frame is a key frame, seq goes on.
  c.send_text(R"({"type":"keyframe","reason":"test"})");
  const auto asked = next(40);
  ASSERT_TRUE(asked);
  EXPECT_TRUE(video_of(*asked)["key"].get<bool>());
  EXPECT_EQ(video_of(*asked)["seq"].get<uint64_t>(), videos.back()["seq"].get<uint64_t>() + 1);
  // A new size: a new stream, seq from 0.
  c.send_text(R"({"type":"settings","size":[96,64]})");
  ASSERT_TRUE(next_text(c, "session"));
  // Every frame in order (the page decodes each), until the first at the new size.
  std::optional<FrameMessage> resized;
  c.send_text(pose_message(++id, {330, 273, -800}).dump());
  for (int i = 0; i < 20 && !resized; ++i) {
    auto f = next_frame(c);
    ASSERT_TRUE(f) << m.log();
    if (f->header["width"] == 96) resized = std::move(f);
    else EXPECT_TRUE(decoder.decode(*f, false).decoded);
  }
  ASSERT_TRUE(resized) << m.log();
  EXPECT_TRUE(video_of(*resized)["key"].get<bool>());
  EXPECT_EQ(video_of(*resized)["seq"], 0);
  EXPECT_EQ(video_of(*resized)["coded_width"], 96);
  const auto shown = decoder.decode(*resized, true);
  ASSERT_TRUE(shown.image);
  const auto raw_path = refs / ("frame-" + std::to_string(resized->header["frame"].get<uint64_t>()) + ".ppm");
  const std::string ppm = read_file_text(raw_path);
  ImageRgba8 raw(96, 64);
  const size_t start = ppm.size() - 96 * 64 * 3;
  for (size_t p = 0; p < 96 * 64; ++p)
    for (size_t k = 0; k < 3; ++k) raw.pixels()[p * 4 + k] = uint8_t(ppm[start + p * 3 + k]);
  EXPECT_GT(psnr_rgb(raw, *shown.image), 30.0);
  // The status carries the driver's stream.
  const auto status = next_text(c, "status", 5s);
  ASSERT_TRUE(status);
  EXPECT_EQ((*status)["stream"]["codec"], "h264");
  EXPECT_GE((*status)["stream"]["key_frames"].get<int>(), 1);
}

TEST(LiveVideo, NoDecodersMeansJpegAndMalformedDecodersOneEvent) {
  LiveMaster m({"--codec", "h264"});
  ASSERT_NE(m.port, 0) << m.log();
  json session;
  LiveClient plain = video_page(m, "[]", &session);
  EXPECT_EQ(session["codec"], "jpeg");
  plain.send_text(pose_message(1, {278, 273, -800}).dump());
  const auto f = frame_of_pose(plain, 1);
  ASSERT_TRUE(f) << m.log();
  EXPECT_FALSE(f->video);
  EXPECT_FALSE(f->bands.empty());

  LiveClient odd = m.connect();
  odd.send_text(R"({"type":"hello","want":"watch","decoders":["h264",{"x":1}]})");
  int events = 0;
  std::optional<json> odd_session;
  for (int i = 0; i < 20; ++i) {
    auto msg = odd.receive(1s);
    if (!msg) break;
    if (msg->binary) continue;
    const json j = json::parse(msg->data);
    if (j["type"] == "event" && j["text"].get<std::string>().rfind("decoders refused: ", 0) == 0) ++events;
    if (j["type"] == "session") odd_session = j;
  }
  EXPECT_EQ(events, 1);
  ASSERT_TRUE(odd_session);
  EXPECT_EQ((*odd_session)["codec"], "jpeg");
  plain.send_text(pose_message(2, {280, 273, -800}).dump());
  const auto watched = frame_of_pose(odd, 2);  // still connected, frames in JPEG
  ASSERT_TRUE(watched) << m.log();
  EXPECT_FALSE(watched->video);
}

}  // namespace
}  // namespace tessera
