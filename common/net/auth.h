#pragma once
// Shared-secret challenge-response of the handshake: HMAC-SHA256 (OpenSSL) over a role label,
// the protocol version and both nonces. The secret itself never crosses the wire, and the role
// label keeps one side's proof from being replayed as the other's.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tessera::net {

// The secret file's contents without trailing whitespace. Throws Error if the file is missing,
// unreadable, empty or shorter than 16 bytes (too guessable).
std::string load_secret(const std::filesystem::path& path);

std::string random_nonce();  // kNonceBytes from the OS's CSPRNG

enum class Role { master, worker };
std::string make_proof(const std::string& secret, Role prover, uint32_t version, const std::string& master_nonce,
                       const std::string& worker_nonce);
// Constant-time comparison against the expected proof.
bool check_proof(const std::string& secret, Role prover, uint32_t version, const std::string& master_nonce,
                 const std::string& worker_nonce, const std::string& proof);

}  // namespace tessera::net
