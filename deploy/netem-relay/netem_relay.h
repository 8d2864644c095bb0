#pragma once
// Link emulation in user space for the cluster benchmark: a TCP relay that sits between the
// master and each worker and holds every chunk it forwards for delay ± jitter (uniform), keeping
// the byte order of each direction of each connection. Optionally it also serializes all chunks,
// of every connection and both directions, onto one shared link of a given rate (a half-duplex
// medium such as Wi-Fi, where all stations share the air time); the benchmark uses that only
// where the kernel's traffic shaping is not available.
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/net/address.h"
#include "common/net/asio.h"

namespace tessera::netem {

struct LinkProfile {
  std::chrono::microseconds delay{0};   // one way, added to every chunk
  std::chrono::microseconds jitter{0};  // uniform in [-jitter, +jitter]; a chunk never overtakes
  double rate_bits_per_s = 0;           // 0: unlimited; else one link shared by every connection
  uint64_t seed = 1;
  size_t max_queued_bytes = 16u << 20;  // per direction; reading pauses above it
  // Faults (deploy/soak), changed while the relay runs (Relay::set_profile). A TCP relay sees no
  // packets, so a lost packet is what TCP makes of it: its chunk (and, keeping the order, the ones
  // behind it) held `retransmit` longer. Partitioned: nothing crosses until it ends; connections stay.
  double loss = 0;  // 0..1, per chunk
  std::chrono::microseconds retransmit{200000};
  bool partitioned = false;
};

struct Route {
  net::HostPort listen;  // port 0: the OS picks one (see Relay::listen_port)
  net::HostPort target;
};

struct RelayCounters {
  uint64_t connections = 0;
  uint64_t bytes_to_target = 0;  // master -> worker
  uint64_t bytes_from_target = 0;
};

// Runs on one io_context (single thread). Throws on a route that cannot listen.
class Relay {
 public:
  Relay(asio::io_context& io, LinkProfile profile);
  ~Relay();
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  // Starts listening for one route; returns the port it listens on.
  uint16_t add_route(const Route& route);
  // New link settings for every chunk read from now on (a partition also holds the queued ones).
  void set_profile(const LinkProfile& profile);
  // Closes listeners and every open connection.
  void stop();
  RelayCounters counters() const;

  struct Shared;  // link state shared by all connections (implementation detail)

 private:
  asio::io_context& io_;
  std::shared_ptr<Shared> shared_;
  std::vector<std::shared_ptr<asio::ip::tcp::acceptor>> acceptors_;
};

// "5", "5ms", "500us", "0.5ms" -> microseconds; "300mbit", "54Mbit", "1gbit", "800kbit" -> bits/s.
// Both throw std::invalid_argument naming `what` on bad text.
std::chrono::microseconds parse_duration(const std::string& text, const std::string& what);
double parse_rate(const std::string& text, const std::string& what);
// tessera-netem-relay --control: words `delay=5ms jitter=1ms rate=2mbit loss=20% partition=on|off`
// applied over `base` (absent words keep base's values). Throws std::invalid_argument on bad text.
LinkProfile parse_profile_words(const std::string& text, LinkProfile base);

}  // namespace tessera::netem
