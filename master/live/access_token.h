#pragma once
// The live session's access token (as Jupyter's): a random secret printed in the URL, required
// for the page and the WebSocket, compared in constant time.
#include <optional>
#include <string>
#include <string_view>

namespace tessera::master::live {

std::string random_token();  // 32 hex characters from the OS's CSPRNG

// The value of `name` in a request target's query ("/ws?token=abc&x=1"), undecoded; nullopt if absent.
std::optional<std::string> query_parameter(std::string_view target, std::string_view name);

// The path of a request target without its query.
std::string_view target_path(std::string_view target);

bool token_matches(std::string_view expected, std::optional<std::string> given);

}  // namespace tessera::master::live
