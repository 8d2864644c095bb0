#include "common/net/auth.h"

#include <algorithm>

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bitset>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/net/protocol.h"

namespace tessera::net {
namespace {

void random_bytes(void* out, size_t size) {
  if (RAND_bytes(static_cast<unsigned char*>(out), int(size)) != 1) throw Error("the system's random number generator failed");
}

// A secret is 64 hex digits and a newline: a secret file larger than this is refused unread.
constexpr size_t kMaxSecretFileBytes = 4096;

bool is_space(char c) { return c == '\n' || c == '\r' || c == ' ' || c == '\t'; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string load_secret(const std::filesystem::path& path) {
  const std::string name = path.string();
  const std::string make_one = " (make one with: tessera-worker --make-secret FILE)";
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw Error("cannot read the secret file " + name + ": " + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) throw Error("secret file " + name + " is not a regular file");
  if (info.st_mode & (S_IRWXG | S_IRWXO)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", unsigned(info.st_mode & 0777));
    throw Error("secret file " + name + " has mode " + mode + ": group and others may read or change it (chmod 600 " + name + ")");
  }
  if (info.st_size > off_t(kMaxSecretFileBytes))
    throw Error("secret file " + name + " holds " + std::to_string(info.st_size) + " bytes; a secret is " +
                std::to_string(2 * kMinSecretBytes) + " hex digits" + make_one);
  std::string text;
  try {
    text = read_file_text(path);
    if (text.size() > kMaxSecretFileBytes) throw Error("it grew while being read");
  } catch (const std::exception& e) {
    throw Error("cannot read the secret file: " + std::string(e.what()));
  }
  while (!text.empty() && is_space(text.back())) text.pop_back();
  size_t start = 0;
  while (start < text.size() && is_space(text[start])) ++start;
  text.erase(0, start);
  if (text.empty()) throw Error("secret file " + name + " is empty" + make_one);
  std::bitset<16> digits;
  for (char& c : text) {
    const int d = hex_digit(c);
    if (d < 0) throw Error("secret in " + name + " is not hex (" + std::to_string(2 * kMinSecretBytes) + "+ digits 0-9a-f)" + make_one);
    digits.set(size_t(d));
    // The key is the digits, whatever their case: the same secret typed in upper case matches.
    c = char(std::tolower(static_cast<unsigned char>(c)));
  }
  if (text.size() < 2 * kMinSecretBytes)
    throw Error("secret in " + name + " has " + std::to_string(text.size()) + " hex digits; at least " +
                std::to_string(2 * kMinSecretBytes) + " (" + std::to_string(kMinSecretBytes) + " random bytes) are needed" + make_one);
  // 64 random hex digits show fewer than 8 distinct values with a probability below 1e-17.
  if (digits.count() < 8) throw Error("secret in " + name + " is not random (too few distinct digits)" + make_one);
  // nor a short pattern typed again ("0123456789abcdef" four times): a period of 32 digits or less
  // holds at most 16 random bytes
  for (size_t period = 1; period <= 32 && period < text.size(); ++period)
    if (std::equal(text.begin() + ptrdiff_t(period), text.end(), text.begin()))
      throw Error("secret in " + name + " is not random (it repeats every " + std::to_string(period) + " digits)" + make_one);
  return text;
}

std::string make_secret() {
  std::array<uint8_t, kMinSecretBytes> bytes{};
  random_bytes(bytes.data(), bytes.size());
  static const char* kHex = "0123456789abcdef";
  std::string text;
  for (uint8_t b : bytes) {
    text.push_back(kHex[b >> 4]);
    text.push_back(kHex[b & 15]);
  }
  return text;
}

void write_new_secret_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) throw Error("cannot create the secret file " + path.string() + ": " + std::strerror(errno));
  const std::string text = make_secret() + "\n";
  const bool written = ::fchmod(fd, 0600) == 0 && ::write(fd, text.data(), text.size()) == ssize_t(text.size());
  const bool closed = ::close(fd) == 0;
  if (!written || !closed) {
    const std::string why = std::strerror(errno);
    ::unlink(path.c_str());
    throw Error("cannot write the secret file " + path.string() + ": " + why);
  }
}

std::string random_nonce() {
  std::string nonce(kNonceBytes, '\0');
  random_bytes(nonce.data(), nonce.size());
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

SessionKeys derive_session_keys(const std::string& secret, uint32_t version, const std::string& master_nonce,
                                const std::string& worker_nonce) {
  const std::string salt = master_nonce + worker_nonce;
  const auto derive = [&](const std::string& label) {
    std::string info = label;
    for (int i = 0; i < 4; ++i) info.push_back(char(version >> (8 * i)));
    std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr), EVP_PKEY_CTX_free);
    SessionKey key{};
    size_t length = key.size();
    if (!ctx || EVP_PKEY_derive_init(ctx.get()) <= 0 || EVP_PKEY_CTX_set_hkdf_md(ctx.get(), EVP_sha256()) <= 0 ||
        EVP_PKEY_CTX_set1_hkdf_salt(ctx.get(), reinterpret_cast<const unsigned char*>(salt.data()), int(salt.size())) <= 0 ||
        EVP_PKEY_CTX_set1_hkdf_key(ctx.get(), reinterpret_cast<const unsigned char*>(secret.data()), int(secret.size())) <= 0 ||
        EVP_PKEY_CTX_add1_hkdf_info(ctx.get(), reinterpret_cast<const unsigned char*>(info.data()), int(info.size())) <= 0 ||
        EVP_PKEY_derive(ctx.get(), key.data(), &length) <= 0 || length != key.size())
      throw Error("HKDF-SHA256 failed");
    return key;
  };
  return {derive("tessera session master->worker"), derive("tessera session worker->master")};
}

}  // namespace tessera::net
