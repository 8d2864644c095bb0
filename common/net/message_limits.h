#pragma once
// Size limits of the wire protocol. A peer cannot make the other side allocate more than the
// limit of the connection's state: 64 KiB before the handshake completes, kMaxFrameBytes after;
// each body type then has its own, tighter limit.
#include <cstddef>
#include <cstdint>

#include "wire.pb.h"

namespace tessera::net {

inline constexpr size_t kHandshakeFrameBytes = 64 * 1024;
inline constexpr size_t kMaxFrameBytes = 64 * 1024 * 1024;
// What a master may send a worker in one frame: its largest body (a frame request or tile list of
// 2 MiB) with room to spare. A frame's buffer is allocated when its length arrives, so a worker
// takes no more than this from each master that trickles a frame in.
inline constexpr size_t kMasterFrameBytes = 3 * 1024 * 1024;
inline constexpr size_t kSceneChunkBytes = 1024 * 1024;  // payload of one SceneChunk
inline constexpr uint32_t kMaxTileSide = 1024;
inline constexpr uint32_t kMinTileSide = 8;
inline constexpr uint32_t kMaxImageSide = 16384;
inline constexpr uint32_t kMaxTilesPerFrame = 1u << 18;
// A worker sends a frame's batch (reply BATCH) in parts of about this many bytes of tile data
// (a part is sent once it reaches this size, the last one when the frame's tiles are done):
// each part is sealed and opened on its own thread, side by side, and costs 30 bytes of framing.
inline constexpr size_t kBatchPartBytes = 512 * 1024;

// Largest serialized size allowed for a body type.
size_t max_body_bytes(wire::Envelope::BodyCase body);

}  // namespace tessera::net
