#pragma once
// tessera-master --discover: listens for the workers' UDP beacons (common/net/discovery.h) and
// returns the workers heard, at each datagram's source address and the announced TCP port.
// Beacons prove nothing (anyone can send one): with a secret, each worker heard is also put
// through the handshake (HandshakeProbe), and only those that prove the secret are returned
// and count toward `enough`, so forged beacons cannot crowd out the real workers.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/net/address.h"

namespace tessera::master {

struct DiscoveryOptions {
  std::string listen_host = "0.0.0.0";         // all IPv4 addresses
  uint16_t port = 7199;                        // net::kDiscoveryPort
  std::chrono::milliseconds timeout{3000};     // how long to listen
  size_t enough = 0;                           // stop as soon as this many workers are found (0: listen the whole time)
  std::string secret;                          // set: a worker is found once it passed the handshake
  std::chrono::milliseconds handshake_timeout{3000};
};

struct DiscoveredWorker {
  net::HostPort address;   // source address of the beacon, announced TCP port
  std::string name;
  std::string device;
  uint64_t instance = 0;
};

struct DiscoveryResult {
  std::vector<DiscoveredWorker> workers;      // sorted by address, one per HOST:PORT
  size_t ignored = 0;                         // datagrams that were not valid beacons
  std::vector<std::string> other_versions;    // "NAME at HOST:PORT speaks protocol N" (left out)
  std::vector<std::string> unproven;          // "NAME at HOST:PORT: why its handshake failed" (left out)
};

// Throws Error when the port cannot be bound.
DiscoveryResult discover_workers(const DiscoveryOptions& options);

}  // namespace tessera::master
