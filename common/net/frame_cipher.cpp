#include "common/net/frame_cipher.h"

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

FrameSealer::FrameSealer(const SessionKey& key) : ctx_(keyed_context(key, true)) {}
FrameSealer::~FrameSealer() { EVP_CIPHER_CTX_free(ctx_); }

void FrameSealer::seal(std::vector<uint8_t>& frame) {
  const size_t body = frame.size() - kFrameHeaderBytes;
  const uint32_t sealed_length = uint32_t(body + kSealTagBytes);
  for (size_t i = 0; i < kFrameHeaderBytes; ++i) frame[i] = uint8_t(sealed_length >> (8 * i));
  const auto nonce = nonce_for(sequence_++);
  int n = 0;
  frame.resize(frame.size() + kSealTagBytes);
  uint8_t* data = frame.data() + kFrameHeaderBytes;
  if (EVP_EncryptInit_ex(ctx_, nullptr, nullptr, nullptr, nonce.data()) != 1 ||
      EVP_EncryptUpdate(ctx_, nullptr, &n, frame.data(), int(kFrameHeaderBytes)) != 1 ||
      EVP_EncryptUpdate(ctx_, data, &n, data, int(body)) != 1 || EVP_EncryptFinal_ex(ctx_, data + body, &n) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_GET_TAG, int(kSealTagBytes), data + body) != 1)
    throw Error("sealing a frame failed (OpenSSL)");
}

FrameOpener::FrameOpener(const SessionKey& key) : ctx_(keyed_context(key, false)) {}
FrameOpener::~FrameOpener() { EVP_CIPHER_CTX_free(ctx_); }

void FrameOpener::open(std::span<const uint8_t, 4> header, std::vector<uint8_t>& payload) {
  const uint64_t sequence = sequence_++;
  if (payload.size() < kSealTagBytes) throw ProtocolError("sealed frame shorter than its tag");
  const size_t body = payload.size() - kSealTagBytes;
  const auto nonce = nonce_for(sequence);
  int n = 0;
  uint8_t* data = payload.data();
  const bool ok = EVP_DecryptInit_ex(ctx_, nullptr, nullptr, nullptr, nonce.data()) == 1 &&
                  EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_SET_TAG, int(kSealTagBytes), data + body) == 1 &&
                  EVP_DecryptUpdate(ctx_, nullptr, &n, header.data(), int(header.size())) == 1 &&
                  EVP_DecryptUpdate(ctx_, data, &n, data, int(body)) == 1 && EVP_DecryptFinal_ex(ctx_, data + body, &n) == 1;
  if (!ok)
    throw ProtocolError("frame " + std::to_string(sequence) +
                        " of the session does not authenticate (altered, injected, replayed or reordered)");
  payload.resize(body);
}

}  // namespace tessera::net
