#include "master/live/frame_message.h"

#include "common/base/error.h"

namespace tessera::master::live {

std::string pack_frame_message(const nlohmann::json& header, const std::string& jpeg) {
  const std::string text = header.dump();
  const auto length = uint32_t(text.size());
  std::string message;
  message.reserve(4 + text.size() + jpeg.size());
  for (int i = 0; i < 4; ++i) message += char((length >> (8 * i)) & 0xff);
  message += text;
  message += jpeg;
  return message;
}

FrameMessage unpack_frame_message(const std::string& message) {
  if (message.size() < 4) throw Error("frame message shorter than its length field");
  uint32_t length = 0;
  for (int i = 0; i < 4; ++i) length |= uint32_t(uint8_t(message[size_t(i)])) << (8 * i);
  if (length > message.size() - 4) throw Error("frame header runs past the message");
  FrameMessage frame;
  frame.header = nlohmann::json::parse(message.substr(4, length), nullptr, false);
  if (!frame.header.is_object() || frame.header.value("type", "") != "frame") throw Error("frame header is not a frame object");
  frame.jpeg = message.substr(4 + length);
  return frame;
}

}  // namespace tessera::master::live
