#pragma once
// The shared secret and what the handshake derives from it (OpenSSL): HMAC-SHA256 proofs over a
// role label, the protocol version and both nonces, and the session keys (HKDF-SHA256 over the
// secret, salted with both nonces) that seal every frame after the handshake. The secret itself
// never crosses the wire, and the role label keeps one side's proof from being replayed as the
// other's.
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>

namespace tessera::net {

// A secret is at least this many random bytes, written as hex (twice as many digits).
inline constexpr size_t kMinSecretBytes = 32;

// The secret file's contents without surrounding whitespace. Throws Error, naming the file, if it
// is missing, unreadable, readable or writable by group or others, not hex, shorter than
// kMinSecretBytes bytes, or visibly not random (fewer than 8 distinct digits).
std::string load_secret(const std::filesystem::path& path);
// kMinSecretBytes from the OS's CSPRNG as lowercase hex.
std::string make_secret();
// Writes make_secret() and a newline into a new file of mode 600; refuses to replace a file.
void write_new_secret_file(const std::filesystem::path& path);

std::string random_nonce();  // kNonceBytes from the OS's CSPRNG

enum class Role { master, worker };
std::string make_proof(const std::string& secret, Role prover, uint32_t version, const std::string& master_nonce,
                       const std::string& worker_nonce);
// Constant-time comparison against the expected proof.
bool check_proof(const std::string& secret, Role prover, uint32_t version, const std::string& master_nonce,
                 const std::string& worker_nonce, const std::string& proof);

// One key per direction, so the two directions' sequence numbers never share a nonce.
using SessionKey = std::array<uint8_t, 32>;
struct SessionKeys {
  SessionKey master_to_worker{}, worker_to_master{};
};
SessionKeys derive_session_keys(const std::string& secret, uint32_t version, const std::string& master_nonce,
                                const std::string& worker_nonce);

}  // namespace tessera::net
