#pragma once
// HOST:PORT addresses as users type them ("127.0.0.1:7000", "phone-3:7000", "[::1]:7000").
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tessera::net {

struct HostPort {
  std::string host;
  uint16_t port = 0;
  std::string text() const;  // back to HOST:PORT
};

// Throws Error naming `what` (e.g. "--listen") on a missing host, a bad or out-of-range port.
// `allow_port_zero`: a listener may ask the OS for a free port.
HostPort parse_host_port(const std::string& text, const std::string& what, bool allow_port_zero = false);
// Comma-separated list; empty items are errors.
std::vector<HostPort> parse_host_port_list(const std::string& text, const std::string& what);
// One HOST:PORT a line; blank lines and lines starting with '#' are skipped.
std::vector<HostPort> read_host_port_file(const std::filesystem::path& path);

}  // namespace tessera::net
