#pragma once
// UTF-8 for protobuf string fields (file names in a .tpk manifest, scene names on the wire): a
// proto3 string that is not valid UTF-8 fails to serialize or to parse on the other side, and
// file names on Linux are arbitrary bytes.
#include <string>
#include <string_view>

namespace tessera {

// Well-formed UTF-8 as Unicode defines it (no overlong forms, surrogates or code points above
// U+10FFFF).
bool is_valid_utf8(std::string_view text);
// `text` with every byte that is not part of a well-formed sequence replaced by U+FFFD.
std::string valid_utf8(std::string_view text);

}  // namespace tessera
