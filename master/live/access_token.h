#pragma once
// The live session's access token (as Jupyter's): a random secret printed in the URL, required
// for the page and the WebSocket, compared in constant time. The page exchanges it for a session
// cookie (HttpOnly, Secure, SameSite=Strict) and drops it from its address, so it stays out of the
// browser's history; the cookie then serves the page's reloads and its WebSocket.
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

// The value of cookie `name` in a Cookie header ("a=1; tessera-live-443=x"); nullopt if absent.
std::optional<std::string> cookie_value(std::string_view cookie_header, std::string_view name);

// The session cookie's value for `token`: derived from it (HMAC-SHA256), so a master restarted with
// the same --token takes its pages back, and the token cannot be recovered from it.
std::string session_cookie_value(std::string_view token);

// The session cookie of a server on `port` (cookies are per host, not per port: the name keeps two
// masters on one host apart).
std::string session_cookie_name(uint16_t port);
// A Set-Cookie value: the page's scripts cannot read it, it travels over HTTPS only, never with a
// request another site starts, and ends with the browser session.
std::string session_cookie(std::string_view name, std::string_view value);

}  // namespace tessera::master::live
