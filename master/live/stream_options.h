#pragma once
// What stream a page gets (master/web/PROTOCOL.md, "Video streams"): the command line's
// --codec, --stream-bitrate and --reference-frames, and the codec a page's hello decides.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/image/image.h"
#include "common/video/video_codec.h"
#include "master/live/rate_controller.h"

namespace tessera::master::live {

// --reference-frames DIR[:EVERY]: every EVERY-th frame's raw image as DIR/frame-F.ppm.
struct ReferenceFrames {
  std::filesystem::path dir;
  uint64_t every = 30;
};

struct StreamOptions {
  std::string codec = "auto";      // auto | jpeg | h264 | vp9 | av1
  RateOptions rate;                // --stream-bitrate
  std::optional<ReferenceFrames> reference;
  unsigned encoder_threads = 0;    // per stream (0: one per hardware thread, at most 8)
  unsigned strips = 0;             // --video-strips (0: video::strip_count_for the coded height and the threads)
};

// Throw UsageError for anything else.
std::string parse_codec_setting(const std::string& text);              // auto | jpeg | h264 | vp9 | av1
RateOptions parse_stream_bitrate(const std::string& text);             // MBIT (0.1..1000) | auto
ReferenceFrames parse_reference_frames(const std::string& text);       // DIR[:EVERY]

// auto's preference, best first: H.264 (the cheapest encode for its quality on the master's
// CPU, x264's low-latency mode, and decoded in hardware by every headset and phone), VP9 (cheap
// at real-time speed, hardware decode on most), AV1 (the best quality a bit, but SVT-AV1's encode
// costs the most and cannot change its rate mid-stream).
inline constexpr video::Codec kAutoPreference[] = {video::Codec::h264, video::Codec::vp9, video::Codec::av1};

// The page's stream: the setting's codec when the page decodes it (auto: the first of the
// preference it decodes); JPEG (nullopt) otherwise.
std::optional<video::Codec> choose_stream_codec(const std::string& setting, const std::vector<video::Codec>& decoders);

// Writes `image` as a binary PPM (P6) to DIR/frame-F.ppm (through a temporary name, so a reader
// never sees half a file). Throws Error when it cannot.
void write_reference_frame(const ReferenceFrames& reference, uint64_t frame_id, const ImageRgba8& image);

}  // namespace tessera::master::live
