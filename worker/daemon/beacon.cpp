#include "worker/daemon/beacon.h"

#include "common/base/error.h"
#include "common/base/usage_error.h"
#include "common/net/log.h"

namespace tessera::worker {

Beacon::Beacon(asio::io_context& io, BeaconOptions options, const discovery::Beacon& message)
    : options_(std::move(options)), datagram_(net::encode_beacon(message)), socket_v4_(io), socket_v6_(io), timer_(io) {
  if (options_.targets.empty()) throw UsageError("--beacon needs at least one target");
  if (options_.interval < std::chrono::milliseconds(50)) throw UsageError("--beacon-interval must be at least 0.05 s");
  asio::ip::udp::resolver resolver(io);
  for (const auto& target : options_.targets) {
    asio::error_code ec;
    const auto results = resolver.resolve(target.host, std::to_string(target.port), ec);
    if (ec || results.empty()) throw Error("--beacon-to: cannot resolve '" + target.host + "': " + ec.message());
    const auto endpoint = results.begin()->endpoint();
    auto& socket = endpoint.address().is_v4() ? socket_v4_ : socket_v6_;
    if (!socket.is_open()) {
      socket.open(endpoint.protocol(), ec);
      if (ec) throw Error("beacon: cannot open a UDP socket: " + ec.message());
      if (endpoint.address().is_v4()) socket.set_option(asio::socket_base::broadcast(true), ec);
    }
    endpoints_.push_back(endpoint);
  }
  warned_.assign(endpoints_.size(), false);
}

void Beacon::start() {
  send_all();
  schedule();
}

void Beacon::stop() {
  stopped_ = true;
  timer_.cancel();
  asio::error_code ec;
  socket_v4_.close(ec);
  socket_v6_.close(ec);
}

void Beacon::send_all() {
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    auto& socket = endpoints_[i].address().is_v4() ? socket_v4_ : socket_v6_;
    asio::error_code ec;
    socket.send_to(asio::buffer(datagram_), endpoints_[i], 0, ec);
    if (ec && !warned_[i]) {
      warned_[i] = true;
      net::log_warning("beacon to " + options_.targets[i].text() + " failed: " + ec.message() + " (will keep trying)");
    } else if (!ec && warned_[i]) {
      warned_[i] = false;
      net::log_info("beacon to " + options_.targets[i].text() + " works again");
    }
  }
}

void Beacon::schedule() {
  if (stopped_) return;
  timer_.expires_after(options_.interval);
  timer_.async_wait([this](const asio::error_code& ec) {
    if (ec || stopped_) return;
    send_all();
    schedule();
  });
}

}  // namespace tessera::worker
