#pragma once
// Accepts masters' connections on the listening address, one WorkerSession each; a connection
// that breaks the protocol ends alone while the others keep being served. Connections still in
// the handshake live on a small budget of their own (WorkerConfig::max_handshakes, per address
// and in all): a newcomer takes the place of the oldest unauthenticated connection of its own
// address, or of the address holding the most, so idle or slow sockets cannot lock a master
// out. Authenticated masters count toward max_connections.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "common/net/address.h"
#include "common/net/asio.h"
#include "worker/daemon/worker_session.h"

namespace tessera::worker {

class WorkerServer {
 public:
  WorkerServer(asio::io_context& io, WorkerContext context);
  // Binds and starts accepting; returns the bound address (port 0 asks the OS for a free port).
  // Throws Error when the address cannot be bound.
  net::HostPort listen(const net::HostPort& address);
  // Stops accepting and closes every connection (io thread).
  void stop(const std::string& reason);

 private:
  void accept();
  void serve(asio::ip::tcp::socket socket);
  void make_room_for(const std::string& address);
  void evict(uint64_t id);
  void forget_handshake(uint64_t id);

  asio::io_context& io_;
  WorkerContext context_;
  asio::ip::tcp::acceptor acceptor_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::shared_ptr<WorkerSession>> sessions_;  // by accept order
  std::map<uint64_t, std::string> handshaking_;                  // id -> peer address
  std::map<std::string, unsigned> handshakes_from_;              // peer address -> count
  std::set<uint64_t> authenticated_;
  bool stopped_ = false;
};

}  // namespace tessera::worker
