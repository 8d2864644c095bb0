#include "master/live/live_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <openssl/x509.h>

#include <algorithm>

#include "common/base/error.h"
#include "common/net/address.h"
#include "master/live/access_token.h"
#include "master/live/tls_identity.h"

namespace tessera::master::live {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

std::string peer_fingerprint(TlsStream& stream) {
  X509* cert = SSL_get_peer_certificate(stream.native_handle());
  if (!cert) return {};
  std::string text = certificate_fingerprint(cert);
  X509_free(cert);
  return text;
}

// Runs `io` until `done` or the deadline; false on timeout.
template <typename Done>
bool run_until(asio::io_context& io, Done done, std::chrono::steady_clock::time_point deadline) {
  while (!done()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    if (io.stopped()) io.restart();
    io.run_one_for(deadline - now);
  }
  return true;
}

void connect_tls(asio::io_context& io, TlsStream& stream, const std::string& host, uint16_t port,
                 std::chrono::steady_clock::time_point deadline) {
  tcp::resolver resolver(io);
  beast::error_code ec;
  const auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) throw Error("cannot resolve " + host + ": " + ec.message());
  bool done = false;
  beast::get_lowest_layer(stream).expires_at(deadline);
  beast::get_lowest_layer(stream).async_connect(endpoints, [&](beast::error_code e, const tcp::endpoint&) {
    ec = e;
    done = true;
  });
  run_until(io, [&] { return done; }, deadline + std::chrono::seconds(1));
  if (!done || ec) throw Error("cannot connect to " + host + ":" + std::to_string(port) + ": " + (done ? ec.message() : "timeout"));
  beast::get_lowest_layer(stream).socket().set_option(tcp::no_delay(true), ec);  // as browsers: small reports go at once
  SSL_set_tlsext_host_name(stream.native_handle(), host.c_str());
  done = false;
  stream.async_handshake(ssl::stream_base::client, [&](beast::error_code e) {
    ec = e;
    done = true;
  });
  run_until(io, [&] { return done; }, deadline + std::chrono::seconds(1));
  if (!done || ec) throw Error("TLS handshake with " + host + " failed: " + (done ? ec.message() : "timeout"));
}

}  // namespace

LiveUrl parse_live_url(const std::string& url) {
  const std::string scheme = "https://";
  if (url.rfind(scheme, 0) != 0) throw Error("expected https://HOST:PORT/?token=TOKEN, got '" + url + "'");
  const size_t slash = url.find('/', scheme.size());
  const std::string authority = url.substr(scheme.size(), slash == std::string::npos ? std::string::npos : slash - scheme.size());
  const auto address = net::parse_host_port(authority, "the URL");
  LiveUrl parsed{address.host, address.port, {}};
  if (slash != std::string::npos) parsed.token = query_parameter(url.substr(slash), "token").value_or("");
  return parsed;
}

HttpReply https_get(const std::string& host, uint16_t port, const std::string& target, std::chrono::milliseconds timeout,
                    const std::string& cookie) {
  asio::io_context io;
  ssl::context tls(ssl::context::tls_client);
  tls.set_verify_mode(ssl::verify_none);
  TlsStream stream(io, tls);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  connect_tls(io, stream, host, port, deadline);
  http::request<http::empty_body> request(http::verb::get, target, 11);
  request.set(http::field::host, host + ":" + std::to_string(port));
  if (!cookie.empty()) request.set(http::field::cookie, cookie);
  request.keep_alive(false);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  beast::error_code ec;
  bool done = false;
  http::async_write(stream, request, [&](beast::error_code e, size_t) {
    if (e) {
      ec = e;
      done = true;
      return;
    }
    http::async_read(stream, buffer, response, [&](beast::error_code e2, size_t) {
      ec = e2;
      done = true;
    });
  });
  if (!run_until(io, [&] { return done; }, deadline)) throw Error("HTTPS GET " + target + ": timeout");
  if (ec) throw Error("HTTPS GET " + target + ": " + ec.message());
  return {int(response.result_int()), response.body(), std::string(response[http::field::content_type]),
          std::string(response[http::field::set_cookie]), std::string(response["Content-Security-Policy"]),
          std::string(response["Referrer-Policy"])};
}

std::chrono::milliseconds ReconnectBackoff::next() {
  delay_ = delay_.count() == 0 ? std::chrono::milliseconds(100) : std::min(delay_ * 2, std::chrono::milliseconds(2000));
  return delay_;
}

struct LiveClient::Impl {
  asio::io_context io;
  ssl::context tls{ssl::context::tls_client};
  std::optional<websocket::stream<TlsStream>> ws;
  beast::flat_buffer buffer;
  bool read_pending = false, read_done = false;
  beast::error_code read_error;
};

LiveClient::LiveClient(const std::string& host, uint16_t port, const std::string& target, const std::optional<std::string>& origin,
                       const std::optional<std::string>& fingerprint, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  m.tls.set_verify_mode(ssl::verify_none);
  m.ws.emplace(m.io, m.tls);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  connect_tls(m.io, m.ws->next_layer(), host, port, deadline);
  if (fingerprint && peer_fingerprint(m.ws->next_layer()) != *fingerprint)
    throw Error("the server's certificate does not have the expected fingerprint " + *fingerprint);
  beast::get_lowest_layer(*m.ws).expires_never();
  m.ws->set_option(websocket::stream_base::timeout::suggested(beast::role_type::client));
  m.ws->read_message_max(64 * 1024 * 1024);
  m.ws->set_option(websocket::stream_base::decorator([origin](websocket::request_type& request) {
    if (origin) request.set(http::field::origin, *origin);
    request.set(http::field::user_agent, "tessera-live-client");
  }));
  websocket::response_type response;
  beast::error_code ec;
  bool done = false;
  m.ws->async_handshake(response, host + ":" + std::to_string(port), target, [&](beast::error_code e) {
    ec = e;
    done = true;
  });
  if (!run_until(m.io, [&] { return done; }, deadline)) throw Error("WebSocket handshake: timeout");
  if (ec == websocket::error::upgrade_declined)
    throw UpgradeRefused(int(response.result_int()), "the server refused the WebSocket: HTTP " + std::to_string(response.result_int()));
  if (ec) throw Error("WebSocket handshake: " + ec.message());
}

LiveClient::LiveClient(LiveClient&&) noexcept = default;

LiveClient::~LiveClient() {
  if (!impl_ || !impl_->ws || !impl_->ws->is_open()) return;
  auto& m = *impl_;
  bool done = false;
  m.ws->async_close(websocket::close_code::normal, [&](beast::error_code) { done = true; });
  run_until(m.io, [&] { return done; }, std::chrono::steady_clock::now() + std::chrono::milliseconds(500));
}

void LiveClient::send_text(const std::string& message) { write(message, true); }

void LiveClient::send_binary(const std::string& message) { write(message, false); }

void LiveClient::write(const std::string& message, bool text) {
  auto& m = *impl_;
  m.ws->text(text);
  beast::error_code ec;
  bool done = false;
  m.ws->async_write(asio::buffer(message), [&](beast::error_code e, size_t) {
    ec = e;
    done = true;
  });
  if (!run_until(m.io, [&] { return done; }, std::chrono::steady_clock::now() + std::chrono::seconds(30)))
    throw Error("WebSocket write: timeout");
  if (ec == websocket::error::closed) throw ConnectionClosed(int(m.ws->reason().code), std::string(m.ws->reason().reason));
  if (ec) throw ConnectionClosed(-1, "WebSocket write: " + ec.message());  // reset, broken pipe: the connection is gone
}

std::optional<LiveClient::Message> LiveClient::receive(std::chrono::milliseconds timeout) {
  auto& m = *impl_;
  if (!m.read_pending) {
    m.read_pending = true;
    m.read_done = false;
    m.ws->async_read(m.buffer, [&m](beast::error_code e, size_t) {
      m.read_error = e;
      m.read_done = true;
    });
  }
  if (!run_until(m.io, [&] { return m.read_done; }, std::chrono::steady_clock::now() + timeout)) return std::nullopt;
  m.read_pending = false;
  if (m.read_error == websocket::error::closed)
    throw ConnectionClosed(int(m.ws->reason().code), std::string(m.ws->reason().reason));
  if (m.read_error) throw ConnectionClosed(-1, m.read_error.message());
  Message message{m.ws->got_binary(), beast::buffers_to_string(m.buffer.data())};
  m.buffer.consume(m.buffer.size());
  return message;
}

}  // namespace tessera::master::live
