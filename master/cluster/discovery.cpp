#include "master/cluster/discovery.h"

#include <algorithm>
#include <array>
#include <functional>
#include <asio.hpp>
#include <map>

#include "common/base/error.h"
#include "common/net/discovery.h"
#include "common/net/protocol.h"

namespace tessera::master {

DiscoveryResult discover_workers(const DiscoveryOptions& options) {
  asio::io_context io;
  asio::error_code ec;
  const auto address = asio::ip::make_address(options.listen_host, ec);
  if (ec) throw Error("discovery: bad listen address '" + options.listen_host + "'");
  const asio::ip::udp::endpoint local(address, options.port);
  asio::ip::udp::socket socket(io);
  socket.open(local.protocol(), ec);
  if (!ec) socket.set_option(asio::socket_base::reuse_address(true), ec);  // several masters, one host
  if (!ec) socket.bind(local, ec);
  if (ec) throw Error("discovery: cannot listen on UDP " + local.address().to_string() + ":" + std::to_string(options.port) + ": " + ec.message());

  DiscoveryResult result;
  std::map<std::pair<std::string, uint16_t>, DiscoveredWorker> heard;
  std::map<std::pair<std::string, uint16_t>, bool> other_version;
  std::array<uint8_t, net::kMaxBeaconBytes + 1> buffer{};
  asio::ip::udp::endpoint sender;
  asio::steady_timer deadline(io, options.timeout);
  bool done = false;

  std::function<void()> receive = [&] {
    socket.async_receive_from(asio::buffer(buffer), sender, [&](const asio::error_code& error, size_t size) {
      if (done) return;
      if (error) {
        if (error != asio::error::operation_aborted) receive();
        return;
      }
      const auto beacon = net::decode_beacon(buffer.data(), size);
      if (!beacon) {
        ++result.ignored;
      } else {
        const std::string host = sender.address().is_v6() && sender.address().to_v6().is_v4_mapped()
                                     ? asio::ip::make_address_v4(asio::ip::v4_mapped, sender.address().to_v6()).to_string()
                                     : sender.address().to_string();
        const auto key = std::make_pair(host, uint16_t(beacon->port()));
        if (beacon->protocol_version() != net::kProtocolVersion) {
          if (!other_version[key])
            result.other_versions.push_back(beacon->name() + " at " + host + ":" + std::to_string(beacon->port()) +
                                            " speaks protocol " + std::to_string(beacon->protocol_version()));
          other_version[key] = true;
        } else {
          DiscoveredWorker& w = heard[key];
          w.address = net::HostPort{host, uint16_t(beacon->port())};
          w.name = beacon->name();
          w.device = beacon->device();
          w.instance = beacon->instance();
        }
      }
      if (options.enough && heard.size() >= options.enough) {
        done = true;
        deadline.cancel();
        socket.cancel();
        return;
      }
      receive();
    });
  };
  receive();
  deadline.async_wait([&](const asio::error_code&) {
    done = true;
    asio::error_code ignored;
    socket.cancel(ignored);
  });
  io.run();
  for (auto& [key, worker] : heard) result.workers.push_back(std::move(worker));
  return result;
}

}  // namespace tessera::master
