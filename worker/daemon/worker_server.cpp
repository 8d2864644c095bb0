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
    if (ec)
      peer_caused_log().warning("accept failed: " + ec.message());
    else
      serve(std::move(socket));
    accept();
  });
}

void WorkerServer::serve(asio::ip::tcp::socket socket) {
  asio::error_code ec;
  auto address = socket.remote_endpoint(ec).address();
  if (ec) return;  // already gone
  if (address.is_v6() && address.to_v6().is_v4_mapped()) address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
  const std::string host = address.to_string();
  make_room_for(host);
  const uint64_t id = next_id_++;
  auto connection = net::Connection::create(std::move(socket));
  auto session = std::make_shared<WorkerSession>(connection, context_);
  sessions_[id] = session;
  handshaking_[id] = host;
  ++handshakes_from_[host];
  const auto admit = [this, id]() -> std::string {
    forget_handshake(id);
    if (authenticated_.size() >= context_.config.max_connections)
      return "this worker already serves its maximum of " + std::to_string(authenticated_.size()) + " masters";
    authenticated_.insert(id);
    return {};
  };
  session->start(admit, [this, id, peer = connection->peer()](const std::string& reason) {
    if (authenticated_.erase(id))
      net::log_info(peer + ": connection ended: " + reason);
    else
      peer_caused_log().info(peer + ": connection ended before authenticating: " + reason);
    forget_handshake(id);
    sessions_.erase(id);
  });
}

void WorkerServer::make_room_for(const std::string& address) {
  const auto oldest_from = [this](const std::string& host) {
    for (const auto& [id, from] : handshaking_)
      if (from == host) return id;
    return uint64_t{0};
  };
  const auto it = handshakes_from_.find(address);
  if (it != handshakes_from_.end() && it->second >= context_.config.max_handshakes_per_address)
    return evict(oldest_from(address));
  if (handshaking_.size() < context_.config.max_handshakes) return;
  auto busiest = handshakes_from_.begin();
  for (auto i = handshakes_from_.begin(); i != handshakes_from_.end(); ++i)
    if (i->second > busiest->second) busiest = i;
  if (busiest != handshakes_from_.end()) evict(oldest_from(busiest->first));
}

void WorkerServer::evict(uint64_t id) {
  const auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  forget_handshake(id);
  peer_caused_log().warning(it->second->peer() + ": unauthenticated connection closed to make room for a newer one");
  it->second->close("its handshake slot went to a newer connection");
}

void WorkerServer::forget_handshake(uint64_t id) {
  const auto it = handshaking_.find(id);
  if (it == handshaking_.end()) return;
  if (--handshakes_from_[it->second] == 0) handshakes_from_.erase(it->second);
  handshaking_.erase(it);
}

void WorkerServer::stop(const std::string& reason) {
  stopped_ = true;
  asio::error_code ec;
  acceptor_.close(ec);
  std::vector<std::shared_ptr<WorkerSession>> all;
  for (const auto& [id, session] : sessions_) all.push_back(session);
  for (const auto& session : all) session->close(reason);
}

}  // namespace tessera::worker
