#include "master/live/http_server.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <deque>
#include <map>
#include <mutex>
#include <sys/socket.h>
#include <thread>

#include "common/base/error.h"
#include "common/net/log.h"
#include "master/live/access_token.h"
#include "master/live/client_messages.h"
#include "master/live/lan_addresses.h"
#include "master/live/qr_code.h"
#include "master/live/web_files.h"

namespace tessera::master::live {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

constexpr size_t kMaxQueuedTexts = 64;       // status and events; the oldest go first when a page stalls
constexpr size_t kMaxRequestBody = 8 * 1024;  // pages send GETs only
constexpr size_t kReadPiece = 16 * 1024;
constexpr size_t kHardMessageCap = 16 * 1024 * 1024;  // beyond the limit, while a refused message drains
constexpr auto kIdleTimeout = std::chrono::seconds(60);  // between a connection's requests
// The page's scripts, styles and images come from the master alone, its connections go back to it
// alone (wss to the same host and port is 'self'), and no other site may frame it.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; "
    "worker-src 'self' blob:; connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

std::string peer_text(const TlsStream& stream) {
  beast::error_code ec;
  const auto endpoint = beast::get_lowest_layer(stream).socket().remote_endpoint(ec);
  return ec ? std::string("?") : endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
}

}  // namespace

// One upgraded WebSocket: a read loop and a write queue (texts in order, one frame slot).
class ConnectionTicket;

class WsSession : public std::enable_shared_from_this<WsSession> {
 public:
  WsSession(TlsStream&& stream, std::shared_ptr<ConnectionTicket> ticket, uint64_t id, HttpServer::Impl& server, std::string peer)
      : ticket_(std::move(ticket)), ws_(std::move(stream)), id_(id), server_(server), peer_(std::move(peer)) {}
  void accept(http::request<http::string_body> request);
  void queue_text(std::string message);                       // io thread
  void queue_frame(uint64_t frame_id, std::shared_ptr<const std::string> frame);  // io thread
  void close(uint16_t code, const std::string& reason, bool quiet = false);  // io thread

 private:
  void read();
  void on_read(beast::error_code ec, size_t bytes);
  void write();
  void finished(const std::string& why);

  std::shared_ptr<ConnectionTicket> ticket_;  // before the stream: released after the socket closes
  websocket::stream<TlsStream> ws_;
  uint64_t id_;
  HttpServer::Impl& server_;
  std::string peer_;
  beast::flat_buffer buffer_;
  std::deque<std::string> texts_;
  std::shared_ptr<const std::string> frame_, frame_in_flight_;
  uint64_t frame_id_ = 0, frame_in_flight_id_ = 0;
  uint64_t newest_frame_id_ = 0;  // frames queued are never older than this one
  std::string text_in_flight_;
  std::optional<websocket::close_reason> close_;
  bool writing_ = false, closing_ = false, open_ = false, done_ = false;
};

struct HttpServer::Impl {
  Impl(ServerOptions o, ConnectionHandler& h) : options(std::move(o)), handler(h), limits(options.caps) {}
  ServerOptions options;
  ConnectionHandler& handler;
  ConnectionLimits limits;                 // io thread only
  std::map<uint64_t, int> socket_handles;  // of the connections admitted, to close one the limits evict
  uint64_t next_connection = 1;
  std::string cookie_name, cookie_value;   // the session cookie the page's token is exchanged for
  asio::io_context io{1};
  ssl::context tls{ssl::context::tls_server};
  tcp::acceptor acceptor{io};
  std::thread thread;
  std::map<uint64_t, std::shared_ptr<WsSession>> sessions;  // io thread only
  uint64_t next_id = 1;
  std::atomic<size_t> open_count{0};
  std::atomic<uint64_t> skipped{0};
  std::string url, qr_svg;  // set once bound

  void accept();
  void admit(tcp::socket socket);
};

// A connection's place in the server's limits, from accept to close. It travels with the socket from
// owner to owner (ProtocolDetector, then HttpSession or PlainHttpAnswer, then WsSession), each holding
// it before its stream, so the place is given back only once the socket is closed.
class ConnectionTicket {
 public:
  ConnectionTicket(HttpServer::Impl& server, uint64_t id)
      : server_(server), id_(id), deadline_(std::chrono::steady_clock::now() + server.options.first_request_timeout) {}
  ~ConnectionTicket() {
    server_.limits.closed(id_);
    server_.socket_handles.erase(id_);
  }
  ConnectionTicket(const ConnectionTicket&) = delete;
  ConnectionTicket& operator=(const ConnectionTicket&) = delete;
  void first_request() {
    if (waiting_) server_.limits.first_request(id_);
    waiting_ = false;
  }
  bool waiting() const { return waiting_; }
  std::chrono::steady_clock::time_point deadline() const { return deadline_; }

 private:
  HttpServer::Impl& server_;
  uint64_t id_;
  std::chrono::steady_clock::time_point deadline_;
  bool waiting_ = true;
};

namespace {

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  // `received`: what ProtocolDetector read of the TLS handshake already.
  HttpSession(beast::tcp_stream&& stream, std::shared_ptr<ConnectionTicket> ticket, HttpServer::Impl& server,
              beast::flat_buffer&& received)
      : ticket_(std::move(ticket)), stream_(std::move(stream), server.tls), server_(server), buffer_(std::move(received)) {}

  void run() {
    beast::get_lowest_layer(stream_).expires_at(ticket_->deadline());
    stream_.async_handshake(ssl::stream_base::server, buffer_.data(), [self = shared_from_this()](beast::error_code ec, size_t used) {
      self->buffer_.consume(used);
      if (!ec) self->read();  // failed TLS handshakes (a rejected certificate) just end
    });
  }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(kMaxRequestBody);
    if (ticket_->waiting())
      beast::get_lowest_layer(stream_).expires_at(ticket_->deadline());
    else
      beast::get_lowest_layer(stream_).expires_after(kIdleTimeout);
    http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->shutdown();
      self->ticket_->first_request();
      self->handle(self->parser_->release());
    });
  }

  enum class Access { token, cookie, refused };
  // A token in the query must be right (a wrong one is refused whatever cookie comes with it);
  // without one (or an empty one), the session cookie must be.
  Access access(const http::request<http::string_body>& request, const std::string& target) const {
    const auto token = query_parameter(target, "token");
    if (token && !token->empty()) return token_matches(server_.options.token, token) ? Access::token : Access::refused;
    const auto [first, last] = request.equal_range(http::field::cookie);
    for (auto field = first; field != last; ++field)
      if (token_matches(server_.cookie_value, cookie_value(field->value(), server_.cookie_name))) return Access::cookie;
    return Access::refused;
  }

  void handle(http::request<http::string_body> request) {
    const std::string target(request.target());
    const std::string_view path = target_path(target);
    if (websocket::is_upgrade(request)) {
      if (path != "/ws") return respond(request, http::status::not_found, "no WebSocket here\n");
      if (access(request, target) == Access::refused) {
        tessera::net::log_warning("live: refused a WebSocket from " + peer_text(stream_) + ": wrong or missing token");
        return respond(request, http::status::forbidden, "wrong or missing token\n");
      }
      const auto origin = request.find(http::field::origin);
      if (origin != request.end()) {
        const std::string expected = "https://" + std::string(request[http::field::host]);
        if (origin->value() != expected) {
          tessera::net::log_warning("live: refused a WebSocket from " + peer_text(stream_) + ": origin '" +
                                    std::string(origin->value()) + "' is not " + expected);
          return respond(request, http::status::forbidden, "cross-origin WebSocket refused\n");
        }
      }
      beast::get_lowest_layer(stream_).expires_never();
      const uint64_t id = server_.next_id++;
      const std::string peer = peer_text(stream_);
      auto session = std::make_shared<WsSession>(std::move(stream_), std::move(ticket_), id, server_, peer);
      server_.sessions[id] = session;
      session->accept(std::move(request));
      return;
    }
    if (request.method() != http::verb::get && request.method() != http::verb::head)
      return respond(request, http::status::method_not_allowed, "GET only\n");
    const bool page = path == "/" || path == "/index.html";
    const Access page_access = page ? access(request, target) : Access::refused;
    if (page && page_access == Access::refused) {
      tessera::net::log_warning("live: refused the page to " + peer_text(stream_) + ": wrong or missing token");
      return respond(request, http::status::forbidden, "wrong or missing token: open the URL tessera-master printed\n");
    }
    if (path == "/qr.svg") {  // the URL holds the token: as secret as the page
      if (access(request, target) == Access::refused) return respond(request, http::status::forbidden, "wrong or missing token\n");
      return respond(request, http::status::ok, server_.qr_svg, "image/svg+xml");
    }
    const WebFile* file = find_web_file(page ? "/index.html" : path);
    if (!file) return respond(request, http::status::not_found, "not found\n");
    // The token is exchanged for the session cookie; the page then drops it from its address.
    const std::string cookie = page_access == Access::token ? session_cookie(server_.cookie_name, server_.cookie_value) : "";
    respond(request, http::status::ok, std::string(file->content), file->content_type, cookie);
  }

  void respond(const http::request<http::string_body>& request, http::status status, std::string body,
               std::string_view type = "text/plain; charset=utf-8", const std::string& set_cookie = {}) {
    auto response = std::make_shared<http::response<http::string_body>>(status, request.version());
    response->set(http::field::server, "tessera-master");
    response->set(http::field::content_type, type);
    response->set(http::field::cache_control, "no-store");
    response->set("X-Content-Type-Options", "nosniff");
    response->set("Content-Security-Policy", kContentSecurityPolicy);
    response->set("Referrer-Policy", "no-referrer");
    response->set("X-Frame-Options", "DENY");
    if (!set_cookie.empty()) response->set(http::field::set_cookie, set_cookie);
    response->keep_alive(request.keep_alive() && status == http::status::ok);
    if (request.method() != http::verb::head) response->body() = std::move(body);
    response->prepare_payload();
    if (request.method() == http::verb::head) response->body().clear();
    http::async_write(stream_, *response, [self = shared_from_this(), response](beast::error_code ec, size_t) {
      if (ec || !response->keep_alive()) return self->shutdown();
      self->read();
    });
  }

  void shutdown() {
    beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(2));
    stream_.async_shutdown([self = shared_from_this()](beast::error_code) {});
  }

  std::shared_ptr<ConnectionTicket> ticket_;  // before the stream: released after the socket closes
  TlsStream stream_;
  HttpServer::Impl& server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
};

// A browser that was given http://HOST:PORT (or completed a bare address with http://) sends a
// plain request; a TLS handshake would fail it with an unreadable error, so it gets a 400 that says
// where the page is, without the token, and the connection ends.
class PlainHttpAnswer : public std::enable_shared_from_this<PlainHttpAnswer> {
 public:
  PlainHttpAnswer(beast::tcp_stream&& stream, std::shared_ptr<ConnectionTicket> ticket, HttpServer::Impl& server,
                  beast::flat_buffer&& received)
      : ticket_(std::move(ticket)), stream_(std::move(stream)), server_(server), buffer_(std::move(received)) {}

  void run() {
    parser_.header_limit(8 * 1024);
    parser_.body_limit(kMaxRequestBody);
    stream_.expires_at(ticket_->deadline());
    http::async_read(stream_, buffer_, parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->close();  // not HTTP either
      self->answer(self->parser_.get());
    });
  }

 private:
  void answer(const http::request<http::string_body>& request) {
    const std::string origin = "https://" + host_and_port(request);
    tessera::net::log_info("live: " + peer() + " asked for http://; told it " + origin + "/");
    auto response = std::make_shared<http::response<http::string_body>>(http::status::bad_request, request.version());
    response->set(http::field::server, "tessera-master");
    response->set(http::field::content_type, "text/plain; charset=utf-8");
    response->set(http::field::location, origin + "/");
    response->set(http::field::cache_control, "no-store");
    response->keep_alive(false);
    response->body() = "This is an HTTPS port: open " + origin + "/?token=... (the whole URL tessera-master printed)\n";
    response->prepare_payload();
    http::async_write(stream_, *response, [self = shared_from_this(), response](beast::error_code, size_t) { self->close(); });
  }

  // The Host the browser was given when it is a plain name or address with or without a port
  // (name, name:port, [v6], [v6]:port), else the served URL's host; with this port when it had none.
  std::string host_and_port(const http::request<http::string_body>& request) const {
    std::string host(request[http::field::host]);
    const bool bracketed = !host.empty() && host.front() == '[';
    const bool plain = !host.empty() && host.size() < 256 && (bracketed || std::count(host.begin(), host.end(), ':') <= 1) &&
                       std::all_of(host.begin(), host.end(), [](unsigned char c) {
                         return std::isalnum(c) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']';
                       });
    if (!plain) {
      const auto& o = server_.options;
      host = o.url_host.empty() ? o.host : o.url_host;
      if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
    }
    const bool has_port = host.front() == '[' ? host.find("]:") != std::string::npos : host.find(':') != std::string::npos;
    return has_port ? host : host + ":" + std::to_string(server_.acceptor.local_endpoint().port());
  }

  std::string peer() const {
    beast::error_code ec;
    const auto endpoint = stream_.socket().remote_endpoint(ec);
    return ec ? std::string("?") : endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  std::shared_ptr<ConnectionTicket> ticket_;
  beast::tcp_stream stream_;
  HttpServer::Impl& server_;
  beast::flat_buffer buffer_;
  http::request_parser<http::string_body> parser_;
};

// Reads a connection's first bytes to tell a TLS handshake (HttpSession) from a plain-HTTP request
// (PlainHttpAnswer); what it read goes on to the one chosen.
class ProtocolDetector : public std::enable_shared_from_this<ProtocolDetector> {
 public:
  ProtocolDetector(tcp::socket&& socket, std::shared_ptr<ConnectionTicket> ticket, HttpServer::Impl& server)
      : ticket_(std::move(ticket)), stream_(std::move(socket)), server_(server) {}

  void run() {
    stream_.expires_at(ticket_->deadline());
    beast::async_detect_ssl(stream_, buffer_, [self = shared_from_this()](beast::error_code ec, bool tls) {
      if (ec) return;  // closed or silent before saying anything
      if (tls)
        std::make_shared<HttpSession>(std::move(self->stream_), std::move(self->ticket_), self->server_, std::move(self->buffer_))->run();
      else
        std::make_shared<PlainHttpAnswer>(std::move(self->stream_), std::move(self->ticket_), self->server_, std::move(self->buffer_))
            ->run();
    });
  }

 private:
  std::shared_ptr<ConnectionTicket> ticket_;
  beast::tcp_stream stream_;
  HttpServer::Impl& server_;
  beast::flat_buffer buffer_;
};

}  // namespace

void WsSession::accept(http::request<http::string_body> request) {
  ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
  ws_.read_message_max(kHardMessageCap);
  ws_.auto_fragment(false);
  ws_.async_accept(request, [self = shared_from_this()](beast::error_code ec) {
    if (ec) return self->finished("WebSocket handshake failed: " + ec.message());
    self->open_ = true;
    self->server_.open_count++;
    self->server_.handler.opened(self->id_, self->peer_);
    self->read();
    self->write();
  });
}

// Messages are read in pieces, so an oversized one is refused after its first 64 KiB (close 1009,
// a clean close handshake that drains the rest) instead of being buffered whole.
void WsSession::read() {
  ws_.async_read_some(buffer_, kReadPiece, [self = shared_from_this()](beast::error_code ec, size_t bytes) { self->on_read(ec, bytes); });
}

void WsSession::on_read(beast::error_code ec, size_t bytes) {
  if (ec == websocket::error::message_too_big) {  // past the hard cap while draining: Beast has closed
    tessera::net::log_warning("live: closed the connection of " + peer_ + ": message far over the limit");
    return finished("message too big");
  }
  if (ec) return finished(ec == websocket::error::closed ? "closed by the page" : ec.message());
  if (closing_) {  // draining until the page answers our close
    buffer_.consume(buffer_.size());
    return read();
  }
  if (!ws_.got_text()) {
    buffer_.consume(buffer_.size());
    close(1008, "binary messages are not accepted");
    return read();
  }
  if (buffer_.size() > server_.options.max_message) {
    buffer_.consume(buffer_.size());
    close(1009, "message over " + std::to_string(server_.options.max_message / 1024) + " KiB");
    return read();
  }
  if (!ws_.is_message_done()) return read();
  const std::string message = beast::buffers_to_string(buffer_.data());
  buffer_.consume(buffer_.size());
  try {
    server_.handler.text(id_, message);
  } catch (const ProtocolError& e) {
    close(e.close_code, e.what());
  } catch (const std::exception& e) {
    close(1011, std::string("internal error: ") + e.what());
  }
  read();
}

void WsSession::close(uint16_t code, const std::string& reason, bool quiet) {
  if (closing_ || done_) return;
  if (!quiet) tessera::net::log_warning("live: closed the connection of " + peer_ + ": " + reason);
  closing_ = true;
  close_ = websocket::close_reason(websocket::close_code(code), reason.substr(0, 120));  // a close frame's reason fits 123 bytes
  texts_.clear();
  frame_.reset();
  write();
}

void WsSession::queue_text(std::string message) {
  if (closing_ || done_) return;
  if (texts_.size() >= kMaxQueuedTexts) texts_.pop_front();
  texts_.push_back(std::move(message));
  write();
}

void WsSession::queue_frame(uint64_t frame_id, std::shared_ptr<const std::string> frame) {
  if (closing_ || done_ || frame_id <= newest_frame_id_) return;
  newest_frame_id_ = frame_id;
  if (frame_) {  // the page is slow: it gets the newest frame, not every one
    server_.skipped++;
    if (open_) server_.handler.frame_done(id_, frame_id_, false);
  }
  frame_ = std::move(frame);
  frame_id_ = frame_id;
  write();
}

void WsSession::write() {
  if (writing_ || !open_ || done_) return;
  auto self = shared_from_this();
  if (close_) {
    writing_ = true;
    const auto reason = *close_;
    close_.reset();
    ws_.async_close(reason, [self](beast::error_code) { self->writing_ = false; });
    return;
  }
  if (closing_) return;
  auto done = [self](beast::error_code ec, size_t) {
    self->writing_ = false;
    if (self->frame_in_flight_ && !ec) self->server_.handler.frame_done(self->id_, self->frame_in_flight_id_, true);
    self->frame_in_flight_.reset();
    if (ec) return;  // the read side reports the end
    self->write();
  };
  if (!texts_.empty()) {
    writing_ = true;
    text_in_flight_ = std::move(texts_.front());
    texts_.pop_front();
    ws_.text(true);
    ws_.async_write(asio::buffer(text_in_flight_), done);
  } else if (frame_) {
    writing_ = true;
    frame_in_flight_ = std::move(frame_);
    frame_in_flight_id_ = frame_id_;
    frame_.reset();
    ws_.binary(true);
    ws_.async_write(asio::buffer(*frame_in_flight_), done);
  }
}

void WsSession::finished(const std::string& why) {
  if (done_) return;
  done_ = true;
  if (open_) {
    server_.open_count--;
    server_.handler.closed(id_, why);
  }
  server_.sessions.erase(id_);  // the last reference goes with the pending operations
}

void HttpServer::Impl::accept() {
  acceptor.async_accept(io, [this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) admit(std::move(socket));
    accept();
  });
}

void HttpServer::Impl::admit(tcp::socket socket) {
  beast::error_code ec;
  const auto endpoint = socket.remote_endpoint(ec);
  if (ec) return;
  const uint64_t id = next_connection++;
  const std::string address = endpoint.address().to_string();
  const ConnectionLimits::Admission admission = limits.admit(id, address);
  if (admission.evict) {  // its owner sees the socket fail and lets it go (and, with it, its ticket)
    const auto handle = socket_handles.find(*admission.evict);
    if (handle != socket_handles.end()) ::shutdown(handle->second, SHUT_RDWR);
  }
  if (!admission.admitted) {
    tessera::net::log_warning("live: refused a connection from " + address + ": too many connections");
    socket.close(ec);
    return;
  }
  socket.set_option(tcp::no_delay(true), ec);  // a frame's last segment must not wait for the page's delayed ACK
  socket_handles[id] = socket.native_handle();
  auto ticket = std::make_shared<ConnectionTicket>(*this, id);
  std::make_shared<ProtocolDetector>(std::move(socket), std::move(ticket), *this)->run();
}

HttpServer::HttpServer(ServerOptions options, ConnectionHandler& handler) : impl_(std::make_unique<Impl>(std::move(options), handler)) {
  auto& tls = impl_->tls;
  tls.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                  ssl::context::no_tlsv1_1);
  try {
    tls.use_certificate_chain(asio::buffer(impl_->options.tls.certificate_pem));
    tls.use_private_key(asio::buffer(impl_->options.tls.private_key_pem), ssl::context::pem);
  } catch (const std::exception& e) {
    throw Error(std::string("the TLS certificate and key do not fit together: ") + e.what());
  }
  beast::error_code ec;
  const auto address = asio::ip::make_address(impl_->options.host, ec);
  tcp::endpoint endpoint;
  if (!ec) {
    endpoint = tcp::endpoint(address, impl_->options.port);
  } else {
    tcp::resolver resolver(impl_->io);
    const auto found = resolver.resolve(impl_->options.host, std::to_string(impl_->options.port), ec);
    if (ec || found.empty()) throw Error("cannot resolve --serve host '" + impl_->options.host + "'");
    endpoint = *found.begin();
  }
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw Error("cannot listen on " + impl_->options.host + ":" + std::to_string(impl_->options.port) + ": " + ec.message());
  const auto& o = impl_->options;
  impl_->url = page_url(o.url_host.empty() ? o.host : o.url_host, port(), o.token);
  impl_->cookie_name = session_cookie_name(port());
  impl_->cookie_value = session_cookie_value(o.token);
  impl_->qr_svg = qr_svg(QrCode(impl_->url));
}

HttpServer::~HttpServer() { stop(); }

void HttpServer::start() {
  impl_->accept();
  impl_->thread = std::thread([this] { impl_->io.run(); });
}

void HttpServer::stop(const std::string& reason) {
  if (!impl_->thread.joinable()) return;
  if (!reason.empty()) {  // pages learn why (1001 "going away") instead of seeing the connection drop
    asio::post(impl_->io, [this, reason] {
      for (auto& [id, session] : impl_->sessions) session->close(1001, reason, true);
    });
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    while (impl_->open_count > 0 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  impl_->io.stop();
  impl_->thread.join();
  impl_->sessions.clear();
}

uint16_t HttpServer::port() const { return impl_->acceptor.local_endpoint().port(); }
std::string HttpServer::url() const { return impl_->url; }

void HttpServer::send_text(uint64_t connection, std::string message) {
  asio::post(impl_->io, [this, connection, message = std::move(message)]() mutable {
    const auto it = impl_->sessions.find(connection);
    if (it != impl_->sessions.end()) it->second->queue_text(std::move(message));
  });
}

void HttpServer::broadcast_text(std::string message) {
  asio::post(impl_->io, [this, message = std::move(message)] {
    for (auto& [id, session] : impl_->sessions) session->queue_text(message);
  });
}

void HttpServer::broadcast_frame(uint64_t frame_id, std::shared_ptr<const std::string> message) {
  asio::post(impl_->io, [this, frame_id, message = std::move(message)] {
    for (auto& [id, session] : impl_->sessions) session->queue_frame(frame_id, message);
  });
}

void HttpServer::send_frame(uint64_t connection, uint64_t frame_id, std::shared_ptr<const std::string> message) {
  asio::post(impl_->io, [this, connection, frame_id, message = std::move(message)] {
    const auto it = impl_->sessions.find(connection);
    if (it != impl_->sessions.end()) it->second->queue_frame(frame_id, message);
  });
}

size_t HttpServer::connections() const { return impl_->open_count; }
uint64_t HttpServer::frames_skipped() const { return impl_->skipped; }

}  // namespace tessera::master::live
