#pragma once
// The binary WebSocket message that carries one frame to the pages (master/web/PROTOCOL.md): a
// 4-byte little-endian header length, the JSON header, then the frame's JPEG bands one after the
// other. Format 2: the header's "bands" lists each band's rows and byte length; a header without
// "bands" (format 1) is followed by one JPEG of the whole frame.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "master/live/jpeg_bands.h"

namespace tessera::master::live {

constexpr int kFrameFormat = 2;
constexpr size_t kMaxFrameBands = 1024;

// Adds "format" and "bands" to `header`.
std::string pack_frame_message(nlohmann::json header, const std::vector<JpegBand>& bands);

struct FrameMessage {
  nlohmann::json header;
  std::vector<JpegBand> bands;
  int image_width() const;   // eyes * width
  int image_height() const;
};
// Throws Error when the layout, the header or the band table is broken (bands that do not tile
// the frame's rows or do not add up to the bytes after the header).
FrameMessage unpack_frame_message(const std::string& message);

}  // namespace tessera::master::live
