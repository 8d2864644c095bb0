#include "common/video/video_codec.h"

namespace tessera::video {

std::string_view codec_name(Codec codec) {
  switch (codec) {
    case Codec::h264: return "h264";
    case Codec::vp9: return "vp9";
    case Codec::av1: return "av1";
  }
  return "?";
}

// H.264 High profile level 5.1 (up to 4096x2304); VP9 profile 0 level 5.1, 8 bits; AV1 Main
// profile level 5.1 (seq_level_idx 13), Main tier, 8 bits.
std::string_view codec_string(Codec codec) {
  switch (codec) {
    case Codec::h264: return "avc1.640033";
    case Codec::vp9: return "vp09.00.51.08";
    case Codec::av1: return "av01.0.13M.08";
  }
  return "?";
}

std::optional<Codec> parse_codec(std::string_view name) {
  if (name == "h264") return Codec::h264;
  if (name == "vp9") return Codec::vp9;
  if (name == "av1") return Codec::av1;
  return std::nullopt;
}

}  // namespace tessera::video
