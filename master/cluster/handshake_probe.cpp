#include "master/cluster/handshake_probe.h"

namespace tessera::master {

HandshakeProbe::HandshakeProbe(asio::io_context& io, net::HostPort address, const std::string& secret,
                               std::chrono::milliseconds timeout, Done done)
    : address_(std::move(address)),
      handshake_(secret, "tessera-master discovery"),
      timeout_(timeout),
      done_(std::move(done)),
      resolver_(io),
      socket_(io),
      timer_(io) {}

void HandshakeProbe::start() {
  auto self = shared_from_this();
  timer_.expires_after(timeout_);
  timer_.async_wait([self](const asio::error_code& ec) {
    if (!ec) self->finish(false, "no handshake within " + std::to_string(self->timeout_.count()) + " ms");
  });
  resolver_.async_resolve(address_.host, std::to_string(address_.port),
                          [self](const asio::error_code& ec, asio::ip::tcp::resolver::results_type results) {
                            if (!self->done_) return;
                            if (ec) return self->finish(false, "cannot resolve " + self->address_.host + ": " + ec.message());
                            asio::async_connect(self->socket_, results, [self](const asio::error_code& ec2, const auto&) {
                              if (!self->done_) return;
                              if (ec2) return self->finish(false, "cannot connect: " + ec2.message());
                              self->connected(std::move(self->socket_));
                            });
                          });
}

void HandshakeProbe::connected(asio::ip::tcp::socket socket) {
  connection_ = net::Connection::create(std::move(socket));
  auto self = shared_from_this();
  connection_->start([self](wire::Envelope& m) { self->on_message(m); },
                     [self](const std::string& reason) { self->finish(false, reason); });
  connection_->send(handshake_.hello());
}

void HandshakeProbe::on_message(const wire::Envelope& message) {
  if (!done_) return;
  const net::HandshakeStep step = handshake_.on_message(message);
  switch (step.kind) {
    case net::HandshakeStep::Kind::wait: return;
    case net::HandshakeStep::Kind::reply: return connection_->send(*step.message);
    case net::HandshakeStep::Kind::refuse:
      connection_->send(*step.message);
      return finish(false, step.reason);
    case net::HandshakeStep::Kind::peer_ended: return finish(false, step.reason);
    case net::HandshakeStep::Kind::authenticated: return finish(true, {});
  }
}

void HandshakeProbe::finish(bool authenticated, const std::string& reason) {
  if (!done_) return;
  auto done = std::move(done_);
  done_ = nullptr;
  cancel();
  done(authenticated, reason);
}

void HandshakeProbe::cancel() {
  done_ = nullptr;
  timer_.cancel();
  resolver_.cancel();
  asio::error_code ignored;
  socket_.close(ignored);
  if (connection_) connection_->close_after_flush("discovery handshake done");
}

}  // namespace tessera::master
