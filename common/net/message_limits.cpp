#include "common/net/message_limits.h"

namespace tessera::net {

size_t max_body_bytes(wire::Envelope::BodyCase body) {
  constexpr size_t KiB = 1024, MiB = 1024 * KiB;
  switch (body) {
    case wire::Envelope::kHello:
    case wire::Envelope::kChallenge:
    case wire::Envelope::kProof:
    case wire::Envelope::kRefused:
    case wire::Envelope::kCancelFrame:
    case wire::Envelope::kHeartbeat:
    case wire::Envelope::kStatsRequest:
    case wire::Envelope::kWorkerStats: return 4 * KiB;
    case wire::Envelope::kLoadScene:
    case wire::Envelope::kSceneStatus:
    case wire::Envelope::kError: return 64 * KiB;
    case wire::Envelope::kWelcome: return 1 * MiB;
    case wire::Envelope::kSceneChunk: return kSceneChunkBytes + 4 * KiB;
    case wire::Envelope::kFrameRequest:
    case wire::Envelope::kTileAssign: return 2 * MiB;
    // A raw tile of the largest size; the encoder falls back to raw when zstd does not help.
    case wire::Envelope::kTileResult: return size_t(kMaxTileSide) * kMaxTileSide * 4 + 4 * KiB;
    case wire::Envelope::kTileBatch: return kMaxFrameBytes;
    case wire::Envelope::BODY_NOT_SET: return 0;
  }
  return 0;
}

}  // namespace tessera::net
