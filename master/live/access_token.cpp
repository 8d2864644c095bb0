#include "master/live/access_token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "common/base/error.h"

namespace tessera::master::live {

std::string random_token() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) throw Error("cannot draw a random access token");
  static const char* hex = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += hex[b >> 4];
    token += hex[b & 15];
  }
  return token;
}

std::optional<std::string> query_parameter(std::string_view target, std::string_view name) {
  const size_t question = target.find('?');
  if (question == std::string_view::npos) return std::nullopt;
  std::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) return std::string(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

std::string_view target_path(std::string_view target) { return target.substr(0, target.find('?')); }

bool token_matches(std::string_view expected, std::optional<std::string> given) {
  if (!given || given->size() != expected.size() || expected.empty()) return false;
  return CRYPTO_memcmp(expected.data(), given->data(), expected.size()) == 0;
}

std::optional<std::string> cookie_value(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const size_t semicolon = header.find(';');
    std::string_view pair = header.substr(0, semicolon);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    const size_t eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) return std::string(pair.substr(eq + 1));
    if (semicolon == std::string_view::npos) break;
    header.remove_prefix(semicolon + 1);
  }
  return std::nullopt;
}

std::string session_cookie_value(std::string_view token) {
  static const char kPurpose[] = "tessera live session cookie";
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), token.data(), int(token.size()), reinterpret_cast<const unsigned char*>(kPurpose), sizeof kPurpose - 1,
            mac, &length))
    throw Error("cannot derive the session cookie");
  static const char* hex = "0123456789abcdef";
  std::string value;
  for (unsigned int i = 0; i < length; ++i) {
    value += hex[mac[i] >> 4];
    value += hex[mac[i] & 15];
  }
  return value;
}

std::string session_cookie_name(uint16_t port) { return "tessera-live-" + std::to_string(port); }

std::string session_cookie(std::string_view name, std::string_view value) {
  return std::string(name) + "=" + std::string(value) + "; Path=/; Secure; HttpOnly; SameSite=Strict";
}

}  // namespace tessera::master::live
