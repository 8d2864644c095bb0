#pragma once
// Caps on the live server's connections: in all, per remote address, and on how many of an
// address's connections may still be waiting for their first request (TLS handshake and request
// headers, within a deadline). As the workers' pre-authentication budget: sockets that never send a
// request cannot take the places of pages, and the newest connection of an address whose waiting
// places are all taken gets one at the cost of that address's oldest waiting connection (a page that
// opens a fresh connection is served; a flood only replaces itself). Plain bookkeeping: the server
// closes the connections it is told to.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tessera::master::live {

struct ConnectionCaps {
  size_t total = 256;
  size_t per_address = 64;
  size_t waiting_per_address = 8;
};

class ConnectionLimits {
 public:
  explicit ConnectionLimits(ConnectionCaps caps) : caps_(caps) {}

  struct Admission {
    bool admitted = false;
    std::optional<uint64_t> evict;  // a waiting connection to close to make room
  };
  // Connection `id` (ids grow: a lower one is older) from `address` was accepted.
  Admission admit(uint64_t id, const std::string& address);
  void first_request(uint64_t id);  // no longer waiting
  void closed(uint64_t id);         // also for ids that admit refused or evicted
  size_t open() const { return entries_.size(); }

 private:
  struct Entry {
    std::string address;
    bool waiting = true;
  };
  // The oldest waiting connection of `address` (any address when empty).
  std::optional<uint64_t> oldest_waiting(const std::string& address) const;
  std::optional<uint64_t> oldest_waiting_of_busiest_address() const;

  ConnectionCaps caps_;
  std::map<uint64_t, Entry> entries_;
};

}  // namespace tessera::master::live
