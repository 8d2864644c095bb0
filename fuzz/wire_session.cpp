// The cluster's TCP side as a peer can drive it: length-prefixed frames (common/net/framing.h)
// decoded into messages, fed to the handshake state machines (common/net/handshake.h), and, for
// an authenticated session, sealed and opened (common/net/frame_cipher.h). The first byte picks
// the side:
//   0  a hostile master talking to a worker's handshake
//   1  a hostile worker talking to a master's handshake
//   2  an authenticated session: both handshakes run to the end, then the frames are sealed by
//      the master's side and opened by the worker's (each must open to the same bytes, and with
//      a bit flipped where byte 1 says, must not open at all) before they are decoded
// Oracles beyond the sanitizers: a handshake never authenticates a peer without the secret, and
// sealing never lets an altered frame through.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/base/error.h"
#include "common/net/frame_cipher.h"
#include "common/net/framing.h"
#include "common/net/handshake.h"
#include "common/net/message_limits.h"
#include "common/net/protocol.h"

namespace {

using namespace tessera;

const std::string kSecret = "5b0e9c2f7a41d8e3b6c1a9f04d7e2b58c3a6f1e9d0b47a25e8c1f6b3d9a0e472";
const std::string kOtherSecret = "c81f4a9e2d7b053f6ae19c48b2d5f70e3a96c1d84f2be7a0569d3c1e8b47f2a6";

// Splits the input into frames as Connection reads them: a length prefix within `limit`, then
// that many bytes. Stops at the first bad prefix or a truncated frame.
std::vector<std::span<const uint8_t>> frames_of(std::span<const uint8_t> input, size_t limit) {
  std::vector<std::span<const uint8_t>> frames;
  while (input.size() >= net::kFrameHeaderBytes) {
    const uint32_t length = net::decode_frame_length(input.first<net::kFrameHeaderBytes>());
    try {
      net::check_frame_length(length, limit);
    } catch (const net::ProtocolError&) {
      break;
    }
    if (input.size() - net::kFrameHeaderBytes < length) break;
    frames.push_back(input.subspan(net::kFrameHeaderBytes, length));
    input = input.subspan(net::kFrameHeaderBytes + length);
  }
  return frames;
}

template <typename Handshake>
void drive(Handshake& handshake, std::span<const uint8_t> input) {
  for (const auto body : frames_of(input, net::kHandshakeFrameBytes)) {
    const wire::Envelope message = net::decode_body(body);
    const net::HandshakeStep step = handshake.on_message(message);
    if (step.kind == net::HandshakeStep::Kind::authenticated) std::abort();  // no secret, no entry
    if (step.kind == net::HandshakeStep::Kind::refuse || step.kind == net::HandshakeStep::Kind::peer_ended) return;
    if (step.message) net::encode_frame(*step.message);  // what would go out must be sendable
  }
}

void sealed_session(std::span<const uint8_t> input) {
  if (input.empty()) return;
  const size_t flip = input[0];
  input = input.subspan(1);
  net::MasterHandshake master(kSecret, "fuzz-master");
  net::WorkerHandshake worker(kSecret, "fuzz-worker");
  const auto challenge = worker.on_message(master.hello());
  const auto proof = master.on_message(*challenge.message);
  const auto welcome = worker.on_message(*proof.message);
  if (welcome.kind != net::HandshakeStep::Kind::authenticated ||
      master.on_message(*welcome.message).kind != net::HandshakeStep::Kind::authenticated)
    std::abort();
  const auto master_keys = master.session_keys(), worker_keys = worker.session_keys();
  net::FrameSealer sealer(master_keys.master_to_worker);
  net::FrameOpener opener(worker_keys.master_to_worker);
  net::FrameOpener tampered_opener(worker_keys.master_to_worker);  // advances with each frame, opened or not
  for (const auto body : frames_of(input, net::kMaxFrameBytes)) {
    std::vector<uint8_t> frame(net::kFrameHeaderBytes + body.size());
    for (size_t i = 0; i < net::kFrameHeaderBytes; ++i) frame[i] = uint8_t(body.size() >> (8 * i));
    std::copy(body.begin(), body.end(), frame.begin() + net::kFrameHeaderBytes);
    sealer.seal(frame);
    std::vector<uint8_t> altered = frame;
    altered[flip % altered.size()] ^= uint8_t(1u << (flip % 8));
    std::vector<uint8_t> altered_payload(altered.begin() + net::kFrameHeaderBytes, altered.end());
    bool opened = true;
    try {
      tampered_opener.open(std::span<const uint8_t, 4>(altered.data(), 4), altered_payload);
    } catch (const net::ProtocolError&) {
      opened = false;
    }
    if (opened) std::abort();  // a flipped bit went through
    std::vector<uint8_t> payload(frame.begin() + net::kFrameHeaderBytes, frame.end());
    opener.open(std::span<const uint8_t, 4>(frame.data(), 4), payload);
    if (!std::equal(payload.begin(), payload.end(), body.begin(), body.end())) std::abort();
    try {
      const wire::Envelope message = net::decode_body(payload);
      net::body_name(message);
    } catch (const net::ProtocolError&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::span<const uint8_t> input(data + 1, size - 1);
  try {
    switch (data[0] % 3) {
      case 0: {
        net::WorkerHandshake worker(kSecret, "fuzz-worker");
        drive(worker, input);
        break;
      }
      case 1: {
        net::MasterHandshake master(kOtherSecret, "fuzz-master");
        net::encode_frame(master.hello());
        drive(master, input);
        break;
      }
      default: sealed_session(input); break;
    }
  } catch (const net::ProtocolError&) {  // the peer broke the protocol: the connection would end
  } catch (const tessera::Error&) {
  }
  return 0;
}
