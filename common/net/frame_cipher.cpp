#include "common/net/frame_cipher.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <array>
#include <string>

#include "common/base/error.h"
#include "common/net/framing.h"
#include "common/net/protocol.h"

namespace tessera::net {
namespace {

std::array<uint8_t, 12> nonce_for(uint64_t sequence) {
  std::array<uint8_t, 12> nonce{};
  for (int i = 0; i < 8; ++i) nonce[size_t(4 + i)] = uint8_t(sequence >> (8 * i));
  return nonce;
}

EVP_CIPHER_CTX* keyed_context(const SessionKey& key, bool encrypt) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (!ctx || EVP_CipherInit_ex(ctx, EVP_chacha20_poly1305(), nullptr, key.data(), nullptr, encrypt ? 1 : 0) != 1) {
    EVP_CIPHER_CTX_free(ctx);
    throw Error("ChaCha20-Poly1305 is not available in this OpenSSL");
  }
  return ctx;
}

}  // namespace

uint64_t SealTicket::take() {
  if (sequence_ == kUsed) throw Error("a frame's sequence number was used twice (a bug)");
  const uint64_t sequence = sequence_;
  sequence_ = kUsed;
  return sequence;
}

SessionCipher::SessionCipher(const SessionKey& key, bool encrypt) : key_(key), encrypt_(encrypt) {
  idle_.push_back(keyed_context(key_, encrypt_));  // fails here, not on the first frame
}

SessionCipher::~SessionCipher() {
  for (EVP_CIPHER_CTX* ctx : idle_) EVP_CIPHER_CTX_free(ctx);
  OPENSSL_cleanse(key_.data(), key_.size());
}

SealTicket SessionCipher::next() {
  std::lock_guard lock(mutex_);
  if (next_sequence_ == SealTicket::kUsed) throw Error("the session ran out of sequence numbers");
  return SealTicket(next_sequence_++);
}

EVP_CIPHER_CTX* SessionCipher::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      EVP_CIPHER_CTX* ctx = idle_.back();
      idle_.pop_back();
      return ctx;
    }
  }
  return keyed_context(key_, encrypt_);
}

void SessionCipher::release(EVP_CIPHER_CTX* ctx) {
  std::lock_guard lock(mutex_);
  idle_.push_back(ctx);
}

void FrameSealer::seal(std::vector<uint8_t>& frame, SealTicket ticket) {
  const auto nonce = nonce_for(take(ticket));
  const size_t body = frame.size() - kFrameHeaderBytes;
  const uint32_t sealed_length = uint32_t(body + kSealTagBytes);
  for (size_t i = 0; i < kFrameHeaderBytes; ++i) frame[i] = uint8_t(sealed_length >> (8 * i));
  int n = 0;
  frame.resize(frame.size() + kSealTagBytes);
  uint8_t* data = frame.data() + kFrameHeaderBytes;
  EVP_CIPHER_CTX* ctx = acquire();
  const bool ok = EVP_EncryptInit_ex(ctx, nullptr, nullptr, nullptr, nonce.data()) == 1 &&
                  EVP_EncryptUpdate(ctx, nullptr, &n, frame.data(), int(kFrameHeaderBytes)) == 1 &&
                  EVP_EncryptUpdate(ctx, data, &n, data, int(body)) == 1 && EVP_EncryptFinal_ex(ctx, data + body, &n) == 1 &&
                  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, int(kSealTagBytes), data + body) == 1;
  release(ctx);
  if (!ok) throw Error("sealing a frame failed (OpenSSL)");
}

void FrameOpener::open(std::span<const uint8_t, 4> header, std::vector<uint8_t>& payload, SealTicket ticket) {
  const uint64_t sequence = take(ticket);
  if (payload.size() < kSealTagBytes) throw ProtocolError("sealed frame shorter than its tag");
  const size_t body = payload.size() - kSealTagBytes;
  const auto nonce = nonce_for(sequence);
  int n = 0;
  uint8_t* data = payload.data();
  EVP_CIPHER_CTX* ctx = acquire();
  const bool ok = EVP_DecryptInit_ex(ctx, nullptr, nullptr, nullptr, nonce.data()) == 1 &&
                  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, int(kSealTagBytes), data + body) == 1 &&
                  EVP_DecryptUpdate(ctx, nullptr, &n, header.data(), int(header.size())) == 1 &&
                  EVP_DecryptUpdate(ctx, data, &n, data, int(body)) == 1 && EVP_DecryptFinal_ex(ctx, data + body, &n) == 1;
  release(ctx);
  if (!ok)
    throw ProtocolError("frame " + std::to_string(sequence) +
                        " of the session does not authenticate (altered, injected, replayed or reordered)");
  payload.resize(body);
}

}  // namespace tessera::net
