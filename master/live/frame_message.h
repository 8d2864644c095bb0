#pragma once
// The binary WebSocket message that carries one frame to the pages (master/web/PROTOCOL.md): a
// 4-byte little-endian header length, the JSON header, then the JPEG.
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::master::live {

std::string pack_frame_message(const nlohmann::json& header, const std::string& jpeg);

struct FrameMessage {
  nlohmann::json header;
  std::string jpeg;
};
// Throws Error when the layout or the header is broken.
FrameMessage unpack_frame_message(const std::string& message);

}  // namespace tessera::master::live
