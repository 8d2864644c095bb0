#include "master/cluster/discovery.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <memory>

#include "common/base/error.h"
#include "common/net/asio.h"
#include "common/net/discovery.h"
#include "common/net/peer_text.h"
#include "common/net/protocol.h"
#include "master/cluster/handshake_probe.h"

namespace tessera::master {
namespace {

// A worker that failed its handshake is tried again when its beacon comes in after this long.
constexpr std::chrono::milliseconds kProbeAgainAfter{1000};

using Key = std::pair<std::string, uint16_t>;

struct Candidate {
  DiscoveredWorker worker;
  std::shared_ptr<HandshakeProbe> probe;  // running
  bool proven = false;
  std::string failure;
  std::chrono::steady_clock::time_point failed_at;
};

}  // namespace

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
  std::map<Key, Candidate> heard;
  std::map<Key, bool> other_version;
  std::array<uint8_t, net::kMaxBeaconBytes + 1> buffer{};
  asio::ip::udp::endpoint sender;
  asio::steady_timer deadline(io, options.timeout);
  bool done = false;

  const auto found = [&] {
    return size_t(std::count_if(heard.begin(), heard.end(), [&](const auto& h) { return options.secret.empty() || h.second.proven; }));
  };
  const auto finish = [&] {
    done = true;
    deadline.cancel();
    asio::error_code ignored;
    socket.cancel(ignored);
    for (auto& [key, c] : heard)
      if (c.probe) c.probe->cancel();
  };
  const auto check_enough = [&] {
    if (options.enough && found() >= options.enough) finish();
  };
  const auto probe = [&](const Key& key, Candidate& c) {
    c.probe = std::make_shared<HandshakeProbe>(io, c.worker.address, options.secret, options.handshake_timeout,
                                               [&, key](bool authenticated, const std::string& reason) {
                                                 Candidate& done_with = heard[key];
                                                 done_with.probe.reset();
                                                 done_with.proven = authenticated;
                                                 done_with.failure = reason;
                                                 done_with.failed_at = std::chrono::steady_clock::now();
                                                 if (!done) check_enough();
                                               });
    c.probe->start();
  };

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
        const Key key{host, uint16_t(beacon->port())};
        if (beacon->protocol_version() != net::kProtocolVersion) {
          if (!other_version[key])
            result.other_versions.push_back(beacon->name() + " at " + host + ":" + std::to_string(beacon->port()) +
                                            " speaks protocol " + std::to_string(beacon->protocol_version()));
          other_version[key] = true;
        } else {
          Candidate& c = heard[key];
          if (!c.proven) {
            c.worker.address = net::HostPort{host, uint16_t(beacon->port())};
            c.worker.name = beacon->name();
            c.worker.device = beacon->device();
            c.worker.instance = beacon->instance();
          }
          const bool may_try = c.failure.empty() || std::chrono::steady_clock::now() - c.failed_at >= kProbeAgainAfter;
          if (!options.secret.empty() && !c.proven && !c.probe && may_try) probe(key, c);
        }
      }
      check_enough();
      if (!done) receive();
    });
  };
  receive();
  deadline.async_wait([&](const asio::error_code& error) {
    if (!error) finish();
  });
  io.run();
  for (auto& [key, c] : heard) {
    if (options.secret.empty() || c.proven)
      result.workers.push_back(std::move(c.worker));
    else
      result.unproven.push_back(net::printable_peer_text(c.worker.name) + " at " + c.worker.address.text() + ": " +
                                (c.failure.empty() ? "no handshake yet" : c.failure));
  }
  return result;
}

}  // namespace tessera::master
