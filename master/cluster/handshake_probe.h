#pragma once
// One handshake with a worker and nothing more: connects, proves and checks the shared secret
// (common/net/handshake.h), then closes. Discovery uses it to count only workers that know the
// secret, since a beacon proves nothing. Runs on the caller's io_context.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/net/address.h"
#include "common/net/asio.h"
#include "common/net/connection.h"
#include "common/net/handshake.h"

namespace tessera::master {

class HandshakeProbe : public std::enable_shared_from_this<HandshakeProbe> {
 public:
  // `done` runs once on the io thread: true with an empty reason once the worker proved the
  // secret, else false and why.
  using Done = std::function<void(bool authenticated, const std::string& reason)>;
  HandshakeProbe(asio::io_context& io, net::HostPort address, const std::string& secret, std::chrono::milliseconds timeout,
                 Done done);
  void start();
  void cancel();  // io thread; `done` does not run afterwards

 private:
  void connected(asio::ip::tcp::socket socket);
  void on_message(const wire::Envelope& message);
  void finish(bool authenticated, const std::string& reason);

  net::HostPort address_;
  net::MasterHandshake handshake_;
  std::chrono::milliseconds timeout_;
  Done done_;
  asio::ip::tcp::resolver resolver_;
  asio::ip::tcp::socket socket_;
  asio::steady_timer timer_;
  std::shared_ptr<net::Connection> connection_;
};

}  // namespace tessera::master
