#pragma once
// Text that came from a peer (error messages, names, refusal reasons) made safe to print: a log
// line must stay one line, and a peer must not be able to forge or colour the lines around it.
#include <cstddef>
#include <string>
#include <string_view>

namespace tessera::net {

// Printable UTF-8: no control characters (C0, DEL), only well-formed multi-byte sequences.
bool is_printable_utf8(std::string_view text);

// `text` with every control character and every byte of a malformed UTF-8 sequence written as
// \xNN, cut to at most `max_bytes` of input (then "..." follows), for logs and error lines.
std::string printable_peer_text(std::string_view text, size_t max_bytes = 200);

}  // namespace tessera::net
