#include "worker/daemon/worker_server.h"

#include "common/base/error.h"
#include "common/net/connection.h"
#include "common/net/log.h"

namespace tessera::worker {

WorkerServer::WorkerServer(asio::io_context& io, WorkerContext context) : io_(io), context_(context), acceptor_(io) {}

net::HostPort WorkerServer::listen(const net::HostPort& address) {
  asio::error_code ec;
  asio::ip::tcp::resolver resolver(io_);
  const auto results = resolver.resolve(address.host, std::to_string(address.port),
                                        asio::ip::tcp::resolver::passive | asio::ip::tcp::resolver::numeric_service, ec);
  if (ec || results.empty()) throw Error("cannot resolve listen address '" + address.text() + "': " + ec.message());
  const asio::ip::tcp::endpoint endpoint = results.begin()->endpoint();
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw Error("cannot listen on " + address.text() + ": " + ec.message());
  net::HostPort bound = address;
  bound.port = acceptor_.local_endpoint().port();
  accept();
  return bound;
}

void WorkerServer::accept() {
  acceptor_.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
    if (stopped_) return;
    if (ec) {
      net::log_warning("accept failed: " + ec.message());
    } else {
      auto connection = net::Connection::create(std::move(socket));
      if (sessions_.size() >= context_.config.max_connections) {
        net::log_warning(connection->peer() + ": refused, already " + std::to_string(sessions_.size()) + " connections");
        connection->fail("this worker already serves its maximum of " + std::to_string(sessions_.size()) + " connections");
        connection->start({}, {});
      } else {
        auto session = std::make_shared<WorkerSession>(connection, context_);
        sessions_.insert(session);
        net::log_info(connection->peer() + ": connected");
        std::weak_ptr<WorkerSession> weak = session;
        session->start([this, weak, peer = connection->peer()](const std::string& reason) {
          net::log_info(peer + ": connection ended: " + reason);
          if (auto s = weak.lock()) sessions_.erase(s);
        });
      }
    }
    accept();
  });
}

void WorkerServer::stop(const std::string& reason) {
  stopped_ = true;
  asio::error_code ec;
  acceptor_.close(ec);
  for (const auto& session : std::set(sessions_)) session->close(reason);
}

}  // namespace tessera::worker
