#pragma once
// The live session's HTTPS and WebSocket (WSS) server, Boost.Beast over Boost.Asio and OpenSSL,
// on its own io_context and thread (the cluster uses standalone asio on another). It serves the
// embedded page files and a QR code of the page's URL (/qr.svg), checks the access token (the
// page, /qr.svg and /ws; the page exchanges it for an HttpOnly session cookie that serves as well)
// and the Origin of WebSocket upgrades, sends a Content-Security-Policy, caps connections in all and
// per address (connection_limits.h) with a deadline for the first request, bounds every message, and gives each
// connection a send queue where the newest frame replaces an unsent older one, so a slow page skips
// frames and never holds up the others. A plain-HTTP request to the port is answered with a hint to
// use https:// instead of a failed TLS handshake.
// Beast stays inside http_server.cpp; this header is plain C++.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "master/live/connection_limits.h"
#include "master/live/tls_identity.h"

namespace tessera::master::live {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;          // 0: any free port
  // The host of the URL given out (/qr.svg, the plain-HTTP hint): a concrete address when `host`
  // is a wildcard such as 0.0.0.0 (served_hosts() in lan_addresses.h); empty: `host`.
  std::string url_host;
  std::string token;
  TlsIdentity tls;
  size_t max_message = 64 * 1024;  // client -> server WebSocket messages
  ConnectionCaps caps;
  // From accept to a request's complete headers (TLS handshake included): a connection still
  // waiting then is closed.
  std::chrono::milliseconds first_request_timeout{10000};
};

// Calls come from the server thread, one at a time.
class ConnectionHandler {
 public:
  virtual ~ConnectionHandler() = default;
  virtual void opened(uint64_t connection, const std::string& peer) = 0;
  // May throw ProtocolError (client_messages.h): the connection is closed with its code and reason.
  virtual void text(uint64_t connection, const std::string& message) = 0;
  virtual void closed(uint64_t connection, const std::string& why) = 0;
  // The frame broadcast as `frame_id` was written to the connection's socket (sent), or replaced
  // by a newer one before it could be (not sent).
  virtual void frame_done(uint64_t connection, uint64_t frame_id, bool sent) {}
};

class HttpServer {
 public:
  // Binds at once (throws Error when it cannot); serves once start() runs.
  HttpServer(ServerOptions options, ConnectionHandler& handler);
  ~HttpServer();  // stops and joins
  void start();
  // Closes every page's connection with `reason` (code 1001, waiting up to half a second for the
  // close frames to go out) unless it is empty, then stops serving.
  void stop(const std::string& reason = {});
  uint16_t port() const;
  std::string url() const;  // https://URL_HOST:PORT/?token=TOKEN, the one /qr.svg shows

  // Any thread. Text messages queue in order (bounded); a frame replaces the connection's unsent one.
  void send_text(uint64_t connection, std::string message);
  void broadcast_text(std::string message);
  void broadcast_frame(uint64_t frame_id, std::shared_ptr<const std::string> message);
  // A connection gets a frame no older than one it already got (a frame sent to it alone, e.g. the
  // newest one for a page that just came, may cross a broadcast of the same frame).
  void send_frame(uint64_t connection, uint64_t frame_id, std::shared_ptr<const std::string> message);
  size_t connections() const;
  uint64_t frames_skipped() const;  // replaced before they could be sent, all connections

  struct Impl;  // the Beast side (http_server.cpp)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::master::live
