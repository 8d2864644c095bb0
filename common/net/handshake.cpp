#include "common/net/handshake.h"

#include "common/net/peer_text.h"
#include "common/net/protocol.h"

namespace tessera::net {
namespace {

HandshakeStep refuse(const std::string& reason) {
  HandshakeStep step;
  step.kind = HandshakeStep::Kind::refuse;
  step.message.emplace();
  step.message->mutable_refused()->set_reason(reason);
  step.reason = reason;
  return step;
}

HandshakeStep peer_ended(const std::string& reason) {
  HandshakeStep step;
  step.kind = HandshakeStep::Kind::peer_ended;
  step.reason = reason;
  return step;
}

std::string mismatch(const char* peer, uint32_t theirs, const char* self) {
  return std::string("protocol version mismatch: the ") + peer + " speaks version " + std::to_string(theirs) + ", this " + self +
         " speaks version " + std::to_string(kProtocolVersion);
}

}  // namespace

WorkerHandshake::WorkerHandshake(std::string secret, std::string worker_name)
    : secret_(std::move(secret)), worker_name_(std::move(worker_name)) {}

HandshakeStep WorkerHandshake::on_message(const wire::Envelope& message) {
  const auto body = message.body_case();
  if (state_ == State::done) throw ProtocolError("handshake message after the handshake");
  if (body == wire::Envelope::kHeartbeat) return {};
  if (body == wire::Envelope::kError) {
    if (!message.error().fatal()) return {};
    return peer_ended("the peer ended the connection with an error before authenticating (its text is not logged)");
  }
  if (state_ == State::await_hello) {
    if (body != wire::Envelope::kHello) throw ProtocolError("expected hello, got " + body_name(message));
    const auto& hello = message.hello();
    if (hello.protocol_version() != kProtocolVersion) return refuse(mismatch("master", hello.protocol_version(), "worker"));
    if (hello.nonce().size() != kNonceBytes) throw ProtocolError("hello with a nonce of the wrong size");
    master_nonce_ = hello.nonce();
    worker_nonce_ = random_nonce();
    HandshakeStep step;
    step.kind = HandshakeStep::Kind::reply;
    auto& c = *step.message.emplace().mutable_challenge();
    c.set_protocol_version(kProtocolVersion);
    c.set_nonce(worker_nonce_);
    c.set_worker_name(worker_name_);
    state_ = State::await_proof;
    return step;
  }
  if (body == wire::Envelope::kRefused)
    return peer_ended("the master refused this worker before authenticating (its reason is not logged)");
  if (body != wire::Envelope::kProof) throw ProtocolError("expected proof, got " + body_name(message));
  if (message.proof().proof().empty()) return refuse("authentication failed: the master sent no secret proof");
  if (!check_proof(secret_, Role::master, kProtocolVersion, master_nonce_, worker_nonce_, message.proof().proof()))
    return refuse("authentication failed: wrong shared secret");
  state_ = State::done;
  HandshakeStep step;
  step.kind = HandshakeStep::Kind::authenticated;
  step.message.emplace().mutable_welcome()->set_proof(
      make_proof(secret_, Role::worker, kProtocolVersion, master_nonce_, worker_nonce_));
  return step;
}

SessionKeys WorkerHandshake::session_keys() const {
  if (state_ != State::done) throw ProtocolError("session keys before the handshake completed");
  return derive_session_keys(secret_, kProtocolVersion, master_nonce_, worker_nonce_);
}

MasterHandshake::MasterHandshake(std::string secret, std::string client_name)
    : secret_(std::move(secret)), client_name_(std::move(client_name)) {}

wire::Envelope MasterHandshake::hello() {
  master_nonce_ = random_nonce();
  state_ = State::await_challenge;
  wire::Envelope m;
  m.mutable_hello()->set_protocol_version(kProtocolVersion);
  m.mutable_hello()->set_nonce(master_nonce_);
  m.mutable_hello()->set_client_name(client_name_);
  return m;
}

HandshakeStep MasterHandshake::on_message(const wire::Envelope& message) {
  const auto body = message.body_case();
  if (state_ == State::start || state_ == State::done) throw ProtocolError("handshake message outside the handshake");
  if (body == wire::Envelope::kHeartbeat) return {};
  if (body == wire::Envelope::kRefused) return peer_ended("refused by the worker: " + printable_peer_text(message.refused().reason()));
  if (body == wire::Envelope::kError)
    return peer_ended("the worker reports: " + printable_peer_text(message.error().message()));
  if (state_ == State::await_challenge) {
    if (body != wire::Envelope::kChallenge) throw ProtocolError("expected challenge, got " + body_name(message));
    const auto& c = message.challenge();
    if (c.protocol_version() != kProtocolVersion) return refuse(mismatch("worker", c.protocol_version(), "master"));
    if (c.nonce().size() != kNonceBytes) throw ProtocolError("challenge with a nonce of the wrong size");
    worker_nonce_ = c.nonce();
    HandshakeStep step;
    step.kind = HandshakeStep::Kind::reply;
    step.message.emplace().mutable_proof()->set_proof(make_proof(secret_, Role::master, kProtocolVersion, master_nonce_, worker_nonce_));
    state_ = State::await_welcome;
    return step;
  }
  if (body != wire::Envelope::kWelcome) throw ProtocolError("expected welcome, got " + body_name(message));
  if (!check_proof(secret_, Role::worker, kProtocolVersion, master_nonce_, worker_nonce_, message.welcome().proof()))
    return refuse("authentication failed: the worker does not know this master's shared secret (wrong secret file?)");
  info_ = message.welcome().info();
  state_ = State::done;
  HandshakeStep step;
  step.kind = HandshakeStep::Kind::authenticated;
  return step;
}

SessionKeys MasterHandshake::session_keys() const {
  if (state_ != State::done) throw ProtocolError("session keys before the handshake completed");
  return derive_session_keys(secret_, kProtocolVersion, master_nonce_, worker_nonce_);
}

}  // namespace tessera::net
