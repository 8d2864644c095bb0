#pragma once
// The binary WebSocket message that carries one frame to the pages (master/web/PROTOCOL.md): a
// 4-byte little-endian header length, the JSON header, then the frame's JPEG bands one after the
// other. Format 2: the header's "bands" lists each band's rows and byte length; a header without
// "bands" (format 1) is followed by one JPEG of the whole frame. Depth and alpha sections may follow
// the bands.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "master/live/jpeg_bands.h"

namespace tessera::master::live {

constexpr int kFrameFormat = 2;
constexpr size_t kMaxFrameBands = 1024;

// The sections after the bands (master/web/PROTOCOL.md, "Headset display"): zlib streams of the
// frame's 16-bit inverse depths and of its alpha plane, each only when given.
struct AuxSections {
  const std::string* depth = nullptr;
  float depth_near = 0;  // scene units: q = 65535 * min(1, near / z)
  uint32_t depth_scale = 1;  // one depth sample per depth_scale x depth_scale pixels (master/live/depth_plane.h)
  const std::string* alpha = nullptr;
};

// Adds "format" and "bands" to `header`, and "depth" / "alpha" for the sections given.
std::string pack_frame_message(nlohmann::json header, const std::vector<JpegBand>& bands, const AuxSections& aux = {});
// A video stream's frame ("Video streams"): `header["video"]` (codec, key, seq, ...) gains "bytes";
// "bands" is empty and the encoded frame takes the bands' place.
std::string pack_video_frame_message(nlohmann::json header, const std::string& video, const AuxSections& aux = {});

struct FrameMessage {
  nlohmann::json header;
  std::vector<JpegBand> bands;               // empty for a video frame
  std::optional<std::string> video;          // a video stream's encoded frame (header "video")
  std::optional<std::string> depth, alpha;  // the zlib streams, as sent
  int image_width() const;   // eyes * width
  int image_height() const;
  // The sections inflated: image_width() x image_height() values, rows top to bottom. Throw Error
  // when the section is missing or does not inflate to exactly that.
  std::vector<uint16_t> depth_values() const;
  std::vector<uint8_t> alpha_values() const;
};
// Throws Error when the layout, the header or the band table is broken (bands that do not tile
// the frame's rows or do not add up to the bytes after the header).
FrameMessage unpack_frame_message(const std::string& message);

}  // namespace tessera::master::live
