#pragma once
// Length-prefixed frames: 4-byte little-endian body length, then a serialized Envelope.
// Pure functions, so both ends and the tests share one definition of a valid frame.
#include <cstdint>
#include <span>
#include <vector>

#include "wire.pb.h"

namespace tessera::net {

inline constexpr size_t kFrameHeaderBytes = 4;

// The frame for `message`. Throws ProtocolError if the body exceeds its type's limit (a bug on
// the sending side: nothing that large may go out).
std::vector<uint8_t> encode_frame(const wire::Envelope& message);

uint32_t decode_frame_length(std::span<const uint8_t, kFrameHeaderBytes> header);
// Throws ProtocolError (with the reason a log should show) if `length` is 0 or above `limit`.
void check_frame_length(uint32_t length, size_t limit);

// Parses a body and checks it against its type's limit. Throws ProtocolError when the bytes
// are no Envelope, carry no body this version knows, or are too large for their type.
wire::Envelope decode_body(std::span<const uint8_t> body);

}  // namespace tessera::net
