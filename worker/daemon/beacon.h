#pragma once
// tessera-worker --beacon: announces this worker (name, TCP port, protocol version; never the
// secret) by UDP datagrams (common/net/discovery.h) to the broadcast address or to given
// HOST:PORTs, at once and then every interval, so masters with --discover can find it.
#include <chrono>
#include <vector>

#include "common/net/address.h"
#include "common/net/asio.h"
#include "common/net/discovery.h"

namespace tessera::worker {

struct BeaconOptions {
  std::vector<net::HostPort> targets;  // e.g. 255.255.255.255:7199
  std::chrono::milliseconds interval{1000};
};

class Beacon {
 public:
  // Resolves the targets; throws Error for one that does not resolve or a socket that cannot open.
  Beacon(asio::io_context& io, BeaconOptions options, const discovery::Beacon& message);
  void start();  // first datagram now, then every interval (io thread)
  void stop();

 private:
  void send_all();
  void schedule();

  BeaconOptions options_;
  std::vector<uint8_t> datagram_;
  std::vector<asio::ip::udp::endpoint> endpoints_;
  std::vector<bool> warned_;  // one warning per target whose sends fail, not one a second
  asio::ip::udp::socket socket_v4_, socket_v6_;
  asio::steady_timer timer_;
  bool stopped_ = false;
};

}  // namespace tessera::worker
