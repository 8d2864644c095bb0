#pragma once
// Sealed frames after the handshake: each frame's body is encrypted and authenticated with
// ChaCha20-Poly1305 (OpenSSL EVP) under the direction's session key (auth.h). The nonce is the
// frame's sequence number in that direction and the 4-byte length prefix is authenticated with
// it, so a frame that was altered, injected, dropped, replayed or reordered fails to open and
// the connection ends.
//
//   sealed frame = length (4 bytes LE, = body + 16) | ciphertext of the body | 16-byte tag
#include <cstdint>
#include <span>
#include <vector>

#include "common/net/auth.h"

typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;

namespace tessera::net {

inline constexpr size_t kSealTagBytes = 16;

class FrameSealer {
 public:
  explicit FrameSealer(const SessionKey& key);
  ~FrameSealer();
  FrameSealer(const FrameSealer&) = delete;
  FrameSealer& operator=(const FrameSealer&) = delete;
  // `frame` is a plain frame (framing.h: length prefix, body); sealed in place, 16 bytes longer.
  void seal(std::vector<uint8_t>& frame);

 private:
  EVP_CIPHER_CTX* ctx_;
  uint64_t sequence_ = 0;
};

class FrameOpener {
 public:
  explicit FrameOpener(const SessionKey& key);
  ~FrameOpener();
  FrameOpener(const FrameOpener&) = delete;
  FrameOpener& operator=(const FrameOpener&) = delete;
  // `header` as received, `payload` the ciphertext and tag that followed it; on success `payload`
  // holds the body. Throws ProtocolError when the frame does not authenticate. Every call takes
  // the next sequence number, whether the frame opens or not.
  void open(std::span<const uint8_t, 4> header, std::vector<uint8_t>& payload);

 private:
  EVP_CIPHER_CTX* ctx_;
  uint64_t sequence_ = 0;
};

}  // namespace tessera::net
