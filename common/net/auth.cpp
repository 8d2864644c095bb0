#include "common/net/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/net/protocol.h"

namespace tessera::net {

std::string load_secret(const std::filesystem::path& path) {
  std::string text;
  try {
    text = read_file_text(path);
  } catch (const std::exception& e) {
    throw Error("cannot read the secret file: " + std::string(e.what()));
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' || text.back() == '\t'))
    text.pop_back();
  if (text.empty()) throw Error("secret file " + path.string() + " is empty");
  if (text.size() < 16) throw Error("secret in " + path.string() + " is shorter than 16 bytes (too easy to guess)");
  return text;
}

std::string random_nonce() {
  std::string nonce(kNonceBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), int(nonce.size())) != 1)
    throw Error("the system's random number generator failed");
  return nonce;
}

std::string make_proof(const std::string& secret, Role prover, uint32_t version, const std::string& master_nonce,
                       const std::string& worker_nonce) {
  std::string message = prover == Role::master ? "tessera-master" : "tessera-worker";
  for (int i = 0; i < 4; ++i) message.push_back(char(version >> (8 * i)));
  message += master_nonce;
  message += worker_nonce;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), secret.data(), int(secret.size()), reinterpret_cast<const unsigned char*>(message.data()),
            message.size(), digest, &length))
    throw Error("HMAC-SHA256 failed");
  return std::string(reinterpret_cast<const char*>(digest), length);
}

bool check_proof(const std::string& secret, Role prover, uint32_t version, const std::string& master_nonce,
                 const std::string& worker_nonce, const std::string& proof) {
  const std::string expected = make_proof(secret, prover, version, master_nonce, worker_nonce);
  return proof.size() == expected.size() && CRYPTO_memcmp(proof.data(), expected.data(), proof.size()) == 0;
}

}  // namespace tessera::net
