#pragma once
// A WebSocket client of the live session (what a page does, without a browser): for
// tessera-live-client and the tests. TLS without certificate checks (the master's certificate is
// usually self-signed), optionally pinned to the fingerprint the master printed. Blocking calls
// with timeouts; Beast stays inside live_client.cpp.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace tessera::master::live {

// The parts of the URL tessera-master prints: https://HOST:PORT/?token=TOKEN
struct LiveUrl {
  std::string host;
  uint16_t port = 0;
  std::string token;
};
LiveUrl parse_live_url(const std::string& url);  // throws Error

// The server answered the upgrade with an HTTP status instead of 101.
struct UpgradeRefused : std::runtime_error {
  UpgradeRefused(int status, const std::string& what) : std::runtime_error(what), status(status) {}
  int status;
};
// The server closed the WebSocket.
struct ConnectionClosed : std::runtime_error {
  ConnectionClosed(int code, const std::string& reason) : std::runtime_error("closed " + std::to_string(code) + ": " + reason), code(code), reason(reason) {}
  int code;
  std::string reason;
};

struct HttpReply {
  int status = 0;
  std::string body, content_type;
  std::string set_cookie, content_security_policy, referrer_policy;
};
// One HTTPS GET (tests: the page and its files), with `cookie` as its Cookie header when given.
HttpReply https_get(const std::string& host, uint16_t port, const std::string& target, std::chrono::milliseconds timeout,
                    const std::string& cookie = {});

// tessera-live-client --reconnect: the waits between attempts to reach the master again, 100 ms
// doubling up to 2 s (a restarting master is not hammered), from 100 ms again once a connection worked.
class ReconnectBackoff {
 public:
  std::chrono::milliseconds next();
  void reset() { delay_ = std::chrono::milliseconds(0); }

 private:
  std::chrono::milliseconds delay_{0};
};

class LiveClient {
 public:
  // Connects to wss://host:port`target` ("/ws?token=..."); `origin` is sent when given.
  // Throws UpgradeRefused (403, ...), or Error when the connection or TLS fails.
  LiveClient(const std::string& host, uint16_t port, const std::string& target, const std::optional<std::string>& origin,
             const std::optional<std::string>& fingerprint, std::chrono::milliseconds timeout);
  ~LiveClient();  // closes the WebSocket politely (close 1000), briefly
  LiveClient(LiveClient&&) noexcept;

  void send_text(const std::string& message);
  void send_binary(const std::string& message);
  struct Message {
    bool binary = false;
    std::string data;
  };
  // The next message, or nullopt after `timeout`. Throws ConnectionClosed once the server closed.
  std::optional<Message> receive(std::chrono::milliseconds timeout);

 private:
  void write(const std::string& message, bool text);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::master::live
