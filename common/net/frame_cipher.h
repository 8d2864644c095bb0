#pragma once
// Sealed frames after the handshake: each frame's body is encrypted and authenticated with
// ChaCha20-Poly1305 (OpenSSL EVP) under the direction's session key (auth.h). The nonce is the
// frame's sequence number in that direction and the 4-byte length prefix is authenticated with
// it, so a frame that was altered, injected, dropped, replayed or reordered fails to open and
// the connection ends.
//
//   sealed frame = length (4 bytes LE, = body + 16) | ciphertext of the body | 16-byte tag
//
// Sealing and opening are thread-safe so that many frames of one direction are sealed (worker:
// its tile encoder threads) or opened (master: its tile pool) side by side. The sequence number
// is split from the work: next() hands out numbers from one counter, in the order the frames
// take on the stream (the caller takes it where that order is decided), and seal()/open() with
// that ticket may then run on any thread in any order. A ticket is move-only and consumed by its
// use, and the counter only grows, so no two frames of a direction ever share a nonce; the
// receiver's tickets follow the order frames arrive in, so a frame out of place cannot open.
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "common/net/auth.h"

typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;

namespace tessera::net {

inline constexpr size_t kSealTagBytes = 16;

// The sequence number (nonce) of one frame of a direction.
class SealTicket {
 public:
  SealTicket(SealTicket&& other) noexcept : sequence_(other.sequence_) { other.sequence_ = kUsed; }
  SealTicket& operator=(SealTicket&& other) noexcept {
    sequence_ = other.sequence_;
    other.sequence_ = kUsed;
    return *this;
  }
  SealTicket(const SealTicket&) = delete;
  SealTicket& operator=(const SealTicket&) = delete;
  uint64_t sequence() const { return sequence_; }

 private:
  friend class SessionCipher;
  static constexpr uint64_t kUsed = UINT64_MAX;
  explicit SealTicket(uint64_t sequence) : sequence_(sequence) {}
  uint64_t take();  // the number, once; throws on a ticket already used
  uint64_t sequence_;
};

// One direction's key with a pool of OpenSSL contexts, one per thread at work.
class SessionCipher {
 public:
  SessionCipher(const SessionKey& key, bool encrypt);
  ~SessionCipher();
  SessionCipher(const SessionCipher&) = delete;
  SessionCipher& operator=(const SessionCipher&) = delete;
  // Any thread: the next sequence number of the direction.
  SealTicket next();

 protected:
  EVP_CIPHER_CTX* acquire();
  void release(EVP_CIPHER_CTX* ctx);
  static uint64_t take(SealTicket& ticket) { return ticket.take(); }

 private:
  SessionKey key_;
  bool encrypt_;
  std::mutex mutex_;
  uint64_t next_sequence_ = 0;            // guarded by mutex_
  std::vector<EVP_CIPHER_CTX*> idle_;     // guarded by mutex_
};

class FrameSealer : public SessionCipher {
 public:
  explicit FrameSealer(const SessionKey& key) : SessionCipher(key, true) {}
  // Any thread. `frame` is a plain frame (framing.h: length prefix, body); sealed in place under
  // the ticket's sequence number, 16 bytes longer.
  void seal(std::vector<uint8_t>& frame, SealTicket ticket);
  // One thread sending in order: seal(frame, next()).
  void seal(std::vector<uint8_t>& frame) { seal(frame, next()); }
};

class FrameOpener : public SessionCipher {
 public:
  explicit FrameOpener(const SessionKey& key) : SessionCipher(key, false) {}
  // Any thread. `header` as received, `payload` the ciphertext and tag that followed it, `ticket`
  // taken (next()) in the order the frames arrived; on success `payload` holds the body. Throws
  // ProtocolError when the frame does not authenticate.
  void open(std::span<const uint8_t, 4> header, std::vector<uint8_t>& payload, SealTicket ticket);
  // One thread reading in order: open(header, payload, next()); every call takes the next
  // sequence number, whether the frame opens or not.
  void open(std::span<const uint8_t, 4> header, std::vector<uint8_t>& payload) { open(header, payload, next()); }
};

}  // namespace tessera::net
