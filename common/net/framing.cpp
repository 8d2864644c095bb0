#include "common/net/framing.h"

#include "common/net/frame_cipher.h"
#include "common/net/message_limits.h"
#include "common/net/protocol.h"

namespace tessera::net {

std::vector<uint8_t> encode_frame(const wire::Envelope& message) {
  const size_t size = message.ByteSizeLong();
  if (size > max_body_bytes(message.body_case()))
    throw ProtocolError("refusing to send a " + body_name(message) + " of " + std::to_string(size) +
                        " bytes (limit " + std::to_string(max_body_bytes(message.body_case())) + ")");
  std::vector<uint8_t> frame;
  frame.reserve(kFrameHeaderBytes + size + kSealTagBytes);  // room for the tag: sealing does not copy the frame
  frame.resize(kFrameHeaderBytes + size);
  for (size_t i = 0; i < kFrameHeaderBytes; ++i) frame[i] = uint8_t(size >> (8 * i));
  if (!message.SerializeToArray(frame.data() + kFrameHeaderBytes, int(size)))
    throw ProtocolError("could not serialize a " + body_name(message));
  return frame;
}

uint32_t decode_frame_length(std::span<const uint8_t, kFrameHeaderBytes> header) {
  return uint32_t(header[0]) | uint32_t(header[1]) << 8 | uint32_t(header[2]) << 16 | uint32_t(header[3]) << 24;
}

void check_frame_length(uint32_t length, size_t limit) {
  if (length == 0) throw ProtocolError("empty message (length prefix 0)");
  if (length > limit)
    throw ProtocolError("message of " + std::to_string(length) + " bytes exceeds the limit of " +
                        std::to_string(limit) + " bytes (garbage or a hostile length prefix?)");
}

wire::Envelope decode_body(std::span<const uint8_t> body) {
  wire::Envelope message;
  if (!message.ParseFromArray(body.data(), int(body.size())))
    throw ProtocolError("malformed message: " + std::to_string(body.size()) + " bytes that are not a protocol message");
  if (message.body_case() == wire::Envelope::BODY_NOT_SET)
    throw ProtocolError("message of a type this version does not know (or garbage that parsed)");
  if (body.size() > max_body_bytes(message.body_case()))
    throw ProtocolError(body_name(message) + " of " + std::to_string(body.size()) + " bytes exceeds its limit of " +
                        std::to_string(max_body_bytes(message.body_case())) + " bytes");
  return message;
}

}  // namespace tessera::net
