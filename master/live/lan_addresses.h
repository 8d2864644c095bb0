#pragma once
// Where a headset can open the live session: the concrete addresses behind a --serve host. A
// wildcard bind (0.0.0.0, ::) names no address a browser can open, so it stands for this machine's
// LAN addresses (from getifaddrs), the likeliest one for a headset first and loopback last.
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::master::live {

struct InterfaceAddress {
  std::string interface;  // "wlan0"
  std::string address;    // numeric, without brackets: "192.168.1.20", "fd00::5"
  bool ipv6 = false;
  bool up = false;        // IFF_UP
  bool running = false;   // IFF_RUNNING: has a link (a bridge without members has none)
  bool loopback = false;
};

// This machine's interface addresses (IPv4 and IPv6), in the order the system lists them.
std::vector<InterfaceAddress> local_interface_addresses();

bool is_wildcard_host(const std::string& host);  // "0.0.0.0", "::", "[::]"

// The hosts to print URLs for, best first. A specific host (an address or a name) is itself alone.
// 0.0.0.0: every IPv4 address of an interface that is up, without duplicates, ordered: linked
// physical interfaces, then unlinked ones, then virtual bridges (docker0, virbr0, ...), then
// loopback; "127.0.0.1" when there is none. :: (which also takes IPv4 here): the same, with the
// IPv6 addresses a browser can open (not link-local) after the IPv4 ones of each rank.
// IPv6 addresses come in brackets, ready for a URL ("[fd00::5]").
std::vector<std::string> served_hosts(const std::string& bind_host, const std::vector<InterfaceAddress>& interfaces);

// https://HOST:PORT/?token=TOKEN (HOST as served_hosts gives it; a bare IPv6 address gets brackets).
std::string page_url(const std::string& host, uint16_t port, const std::string& token);

// A host as a certificate names it: an IP address without brackets, or a DNS name.
struct CertificateName {
  std::string value;
  bool ip = false;
};
CertificateName certificate_name(const std::string& host);

}  // namespace tessera::master::live
