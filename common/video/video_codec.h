#pragma once
// The video codecs of the live stream (master/web/PROTOCOL.md, "Video streams"): their names on
// the wire and the WebCodecs codec strings the page configures its decoder with.
#include <optional>
#include <string>
#include <string_view>

namespace tessera::video {

enum class Codec { h264, vp9, av1 };

std::string_view codec_name(Codec codec);    // "h264", "vp9", "av1"
std::string_view codec_string(Codec codec);  // "avc1.640033", "vp09.00.51.08", "av01.0.13M.08"
std::optional<Codec> parse_codec(std::string_view name);

}  // namespace tessera::video
