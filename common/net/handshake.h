#pragma once
// The two sides of the handshake as state machines without sockets, so the worker's session,
// the master's link, discovery's probe and the fuzzer all run the same code:
//
//   master -> Hello(version, nonce_m)
//   worker -> Challenge(version, nonce_w)              or Refused
//   master -> Proof(proof_m)                           (the master proves first)
//   worker -> Welcome(proof_w, WorkerInfo)             or Refused, once proof_m checked out
//   ... every later frame in both directions sealed (frame_cipher.h)
//
// The worker answers anyone who connects, so it proves nothing until the master has: a peer
// without the secret gets only random nonces, nothing it could test guesses of the secret on.
// Text a peer sends before it proved the secret is never logged by the worker.
#include <optional>
#include <string>

#include "common/net/auth.h"
#include "wire.pb.h"

namespace tessera::net {

// What one incoming handshake message asks of the connection.
struct HandshakeStep {
  enum class Kind {
    wait,           // nothing to do (a heartbeat, a non-fatal error)
    reply,          // send `message`, keep reading
    refuse,         // send `message` (a Refused), then close after flushing; `reason` is logged
    peer_ended,     // the peer refused us or failed: close; `reason` says why (safe to log)
    authenticated,  // the peer proved the secret; send `message` if set, then seal the session
  };
  Kind kind = Kind::wait;
  std::optional<wire::Envelope> message;
  std::string reason;
};

class WorkerHandshake {
 public:
  WorkerHandshake(std::string secret, std::string worker_name);
  // Throws ProtocolError when the message is not one the handshake allows here. On
  // `authenticated`, `message` is the Welcome with the worker's proof; the caller adds its info.
  HandshakeStep on_message(const wire::Envelope& message);
  bool done() const { return state_ == State::done; }
  // Once done: the keys that seal the session.
  SessionKeys session_keys() const;

 private:
  enum class State { await_hello, await_proof, done };
  std::string secret_, worker_name_, master_nonce_, worker_nonce_;
  State state_ = State::await_hello;
};

class MasterHandshake {
 public:
  MasterHandshake(std::string secret, std::string client_name);
  wire::Envelope hello();  // the first message; once
  // Throws ProtocolError when the message is not one the handshake allows here.
  HandshakeStep on_message(const wire::Envelope& message);
  bool done() const { return state_ == State::done; }
  // Once done: what the worker announced, and the keys that seal the session.
  const wire::WorkerInfo& worker_info() const { return info_; }
  SessionKeys session_keys() const;

 private:
  enum class State { start, await_challenge, await_welcome, done };
  std::string secret_, client_name_, master_nonce_, worker_nonce_;
  wire::WorkerInfo info_;
  State state_ = State::start;
};

}  // namespace tessera::net
