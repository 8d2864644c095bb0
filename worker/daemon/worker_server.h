#pragma once
// Accepts masters' connections on the listening address, one WorkerSession each, up to a
// limit; a connection that breaks the protocol ends alone while the others keep being served.
#include <asio.hpp>
#include <memory>
#include <set>

#include "common/net/address.h"
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

  asio::io_context& io_;
  WorkerContext context_;
  asio::ip::tcp::acceptor acceptor_;
  std::set<std::shared_ptr<WorkerSession>> sessions_;
  bool stopped_ = false;
};

}  // namespace tessera::worker
