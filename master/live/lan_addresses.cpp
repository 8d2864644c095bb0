#include "master/live/lan_addresses.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace tessera::master::live {
namespace {

// Bridges, tunnels and container links: a headset is rarely on their other side, so their
// addresses come after those of the machine's own Ethernet and Wi-Fi.
bool virtual_interface(std::string_view name) {
  static constexpr std::array<std::string_view, 14> prefixes{"docker", "br-",  "virbr",   "veth",      "cni", "flannel", "vmnet",
                                                             "vboxnet", "lxcbr", "lxdbr", "podman", "tun", "wg",      "tailscale"};
  return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return name.substr(0, p.size()) == p; });
}

bool link_local_ipv6(const std::string& address) {
  std::string lower = address.substr(0, 4);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return lower.size() == 4 && lower.substr(0, 3) == "fe8";  // fe80::/10 needs a zone id, which browsers do not take
}

std::string unbracketed(const std::string& host) {
  return host.size() >= 2 && host.front() == '[' && host.back() == ']' ? host.substr(1, host.size() - 2) : host;
}

}  // namespace

std::vector<InterfaceAddress> local_interface_addresses() {
  std::vector<InterfaceAddress> found;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return found;
  for (const ifaddrs* entry = list; entry; entry = entry->ifa_next) {
    if (!entry->ifa_addr || (entry->ifa_addr->sa_family != AF_INET && entry->ifa_addr->sa_family != AF_INET6)) continue;
    InterfaceAddress a;
    a.interface = entry->ifa_name ? entry->ifa_name : "";
    a.ipv6 = entry->ifa_addr->sa_family == AF_INET6;
    a.up = entry->ifa_flags & IFF_UP;
    a.running = entry->ifa_flags & IFF_RUNNING;
    a.loopback = entry->ifa_flags & IFF_LOOPBACK;
    char text[INET6_ADDRSTRLEN] = "";
    const void* raw = a.ipv6 ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(entry->ifa_addr)->sin6_addr)
                             : static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(entry->ifa_addr)->sin_addr);
    if (!::inet_ntop(entry->ifa_addr->sa_family, raw, text, sizeof text)) continue;
    a.address = text;
    found.push_back(std::move(a));
  }
  ::freeifaddrs(list);
  return found;
}

bool is_wildcard_host(const std::string& host) {
  const std::string bare = unbracketed(host);
  return bare == "0.0.0.0" || bare == "::" || bare == "0:0:0:0:0:0:0:0";
}

std::vector<std::string> served_hosts(const std::string& bind_host, const std::vector<InterfaceAddress>& interfaces) {
  if (!is_wildcard_host(bind_host)) {
    const std::string bare = unbracketed(bind_host);
    return {bare.find(':') != std::string::npos ? "[" + bare + "]" : bare};
  }
  const bool take_ipv6 = unbracketed(bind_host) != "0.0.0.0";
  struct Ranked {
    int rank;
    std::string host;
  };
  std::vector<Ranked> ranked;
  for (const auto& a : interfaces) {
    if (!a.up || a.address.empty() || (a.ipv6 && (!take_ipv6 || link_local_ipv6(a.address)))) continue;
    const int kind = a.loopback ? 3 : virtual_interface(a.interface) ? 2 : a.running ? 0 : 1;
    const std::string host = a.ipv6 ? "[" + a.address + "]" : a.address;
    if (std::none_of(ranked.begin(), ranked.end(), [&](const Ranked& r) { return r.host == host; }))
      ranked.push_back({kind * 2 + (a.ipv6 ? 1 : 0), host});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) { return a.rank < b.rank; });
  std::vector<std::string> hosts;
  for (auto& r : ranked) hosts.push_back(std::move(r.host));
  if (hosts.empty()) hosts.push_back("127.0.0.1");
  return hosts;
}

std::string page_url(const std::string& host, uint16_t port, const std::string& token) {
  const bool bare_ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  return "https://" + (bare_ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + "/?token=" + token;
}

CertificateName certificate_name(const std::string& host) {
  const std::string bare = unbracketed(host);
  unsigned char buffer[sizeof(in6_addr)];
  const bool ip = ::inet_pton(AF_INET, bare.c_str(), buffer) == 1 || ::inet_pton(AF_INET6, bare.c_str(), buffer) == 1;
  return {bare, ip};
}

}  // namespace tessera::master::live
