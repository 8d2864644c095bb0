#include "common/net/peer_text.h"

#include <cstdint>
#include <cstdio>

namespace tessera::net {
namespace {

// Length of the well-formed UTF-8 sequence at text[i], or 0 (control character, malformed).
size_t printable_sequence(std::string_view text, size_t i) {
  const auto c = uint8_t(text[i]);
  if (c < 0x20 || c == 0x7f) return 0;
  if (c < 0x80) return 1;
  size_t more = 0;
  if ((c & 0xe0) == 0xc0 && c >= 0xc2) more = 1;
  else if ((c & 0xf0) == 0xe0) more = 2;
  else if ((c & 0xf8) == 0xf0 && c <= 0xf4) more = 3;
  else return 0;
  if (i + more >= text.size()) return 0;
  for (size_t k = 1; k <= more; ++k)
    if ((uint8_t(text[i + k]) & 0xc0) != 0x80) return 0;
  // C1 controls (U+0080..U+009F) move terminals as much as C0 ones do.
  if (c == 0xc2 && uint8_t(text[i + 1]) < 0xa0) return 0;
  return more + 1;
}

}  // namespace

bool is_printable_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = printable_sequence(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string printable_peer_text(std::string_view text, size_t max_bytes) {
  const bool cut = text.size() > max_bytes;
  if (cut) text = text.substr(0, max_bytes);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = printable_sequence(text, i);
    if (n == 0) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", unsigned(uint8_t(text[i])));
      out += escaped;
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  if (cut) out += "...";
  return out;
}

}  // namespace tessera::net
