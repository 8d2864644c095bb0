// Worker discovery by UDP beacon: the datagram format (common/net/discovery.h), a worker's beacon
// (worker/daemon/beacon.h) heard by the master's discovery (master/cluster/discovery.h) on
// loopback, malformed datagrams ignored, and discovered workers still held to the secret
// handshake. Suite Discovery runs in-process; DiscoveryWorker starts tessera-worker/-master.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "cluster_test_support.h"
#include "common/base/error.h"
#include "common/net/asio.h"
#include "common/net/auth.h"
#include "common/net/discovery.h"
#include "common/net/protocol.h"
#include "master/cluster/discovery.h"
#include "worker/daemon/beacon.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;

discovery::Beacon sample_beacon(uint16_t port = 7100, const std::string& name = "phone-1") {
  discovery::Beacon b;
  b.set_protocol_version(net::kProtocolVersion);
  b.set_port(port);
  b.set_name(name);
  b.set_device("Adreno 740 (QUALCOMM)");
  b.set_instance(0x0123456789abcdefull);
  return b;
}

// A UDP port that was free a moment ago.
uint16_t free_udp_port() {
  asio::io_context io;
  asio::ip::udp::socket s(io, asio::ip::udp::endpoint(asio::ip::address_v4::loopback(), 0));
  return s.local_endpoint().port();
}

void send_datagram(uint16_t port, const std::vector<uint8_t>& bytes) {
  asio::io_context io;
  asio::ip::udp::socket s(io, asio::ip::udp::v4());
  s.send_to(asio::buffer(bytes), asio::ip::udp::endpoint(asio::ip::address_v4::loopback(), port));
}

std::vector<uint8_t> bytes(const std::string& text) { return {text.begin(), text.end()}; }

TEST(Discovery, BeaconRoundTrips) {
  const auto encoded = net::encode_beacon(sample_beacon());
  ASSERT_LE(encoded.size(), net::kMaxBeaconBytes);
  EXPECT_EQ(std::string(encoded.begin(), encoded.begin() + 4), "TSB1");
  const auto decoded = net::decode_beacon(encoded.data(), encoded.size());
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->port(), 7100u);
  EXPECT_EQ(decoded->name(), "phone-1");
  EXPECT_EQ(decoded->device(), "Adreno 740 (QUALCOMM)");
  EXPECT_EQ(decoded->protocol_version(), net::kProtocolVersion);
  EXPECT_EQ(decoded->instance(), 0x0123456789abcdefull);
  EXPECT_TRUE(net::decode_beacon(net::encode_beacon(sample_beacon(1, "Ünïcødé worker")).data(),
                                 net::encode_beacon(sample_beacon(1, "Ünïcødé worker")).size()));
}

TEST(Discovery, MalformedDatagramsAreRejected) {
  const auto check_rejected = [](std::vector<uint8_t> data, const std::string& reason_part) {
    std::string why;
    EXPECT_FALSE(net::decode_beacon(data.data(), data.size(), &why)) << reason_part;
    EXPECT_NE(why.find(reason_part), std::string::npos) << why;
  };
  const auto good = net::encode_beacon(sample_beacon());
  check_rejected({}, "magic");
  check_rejected(bytes("TSB"), "magic");
  check_rejected(bytes("HTTP/1.1 200 OK\r\n"), "magic");
  auto wrong_magic = good;
  wrong_magic[3] = '2';
  check_rejected(wrong_magic, "magic");
  check_rejected(bytes("TSB1\xff\xff\xff\xff\xff"), "unparseable");
  auto truncated = good;
  truncated.resize(good.size() - 3);
  check_rejected(truncated, "");
  auto oversized = good;
  oversized.resize(net::kMaxBeaconBytes + 1, 0);
  check_rejected(oversized, "larger than 512");
  // Valid protobuf, invalid content: each is built by hand since encode_beacon refuses them.
  const auto raw = [](const discovery::Beacon& b) {
    std::vector<uint8_t> out = bytes("TSB1");
    const std::string body = b.SerializeAsString();
    out.insert(out.end(), body.begin(), body.end());
    return out;
  };
  check_rejected(raw(sample_beacon(0)), "port");
  auto big_port = sample_beacon();
  big_port.set_port(70000);
  check_rejected(raw(big_port), "port");
  check_rejected(raw(sample_beacon(7100, "")), "name");
  check_rejected(raw(sample_beacon(7100, std::string(200, 'x'))), "name");
  check_rejected(raw(sample_beacon(7100, "evil\nname")), "printable");
  check_rejected(raw(sample_beacon(7100, "bad \xc3")), "printable");
  check_rejected(raw(sample_beacon(7100, "bad \xc0\xaf")), "printable");
  EXPECT_THROW(net::encode_beacon(sample_beacon(0)), Error);
}

TEST(Discovery, WorkerBeaconOnLoopbackIsFoundAndGarbageIgnored) {
  const uint16_t port = free_udp_port();
  master::DiscoveryOptions options;
  options.listen_host = "127.0.0.1";
  options.port = port;
  options.timeout = 1500ms;

  asio::io_context io;
  worker::Beacon beacon(io, {{{"127.0.0.1", port}}, 100ms}, sample_beacon(4321, "loop-worker"));
  std::thread beacons([&] {
    // Garbage and a worker of another protocol version on the same port, before and between beacons.
    std::this_thread::sleep_for(200ms);
    send_datagram(port, bytes("not a beacon"));
    auto other = sample_beacon(4322, "old-worker");
    other.set_protocol_version(net::kProtocolVersion + 1);
    send_datagram(port, net::encode_beacon(other));
    send_datagram(port, bytes("TSB1\x08"));
    beacon.start();
    io.run_for(1200ms);
    beacon.stop();
  });
  const master::DiscoveryResult found = master::discover_workers(options);
  beacons.join();
  ASSERT_EQ(found.workers.size(), 1u);
  EXPECT_EQ(found.workers[0].address.text(), "127.0.0.1:4321");
  EXPECT_EQ(found.workers[0].name, "loop-worker");
  EXPECT_EQ(found.workers[0].device, "Adreno 740 (QUALCOMM)");
  EXPECT_EQ(found.ignored, 2u);
  ASSERT_EQ(found.other_versions.size(), 1u);
  EXPECT_NE(found.other_versions[0].find("old-worker"), std::string::npos);
}

TEST(Discovery, StopsAsSoonAsEnoughWorkersAreHeardAndFindsNothingInSilence) {
  const uint16_t port = free_udp_port();
  master::DiscoveryOptions options;
  options.listen_host = "127.0.0.1";
  options.port = port;
  options.timeout = 300ms;
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(master::discover_workers(options).workers.empty());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 290ms);

  options.timeout = 20s;
  options.enough = 2;
  std::thread senders([&] {
    for (int i = 0; i < 20; ++i) {
      std::this_thread::sleep_for(50ms);
      send_datagram(port, net::encode_beacon(sample_beacon(5000, "a")));
      send_datagram(port, net::encode_beacon(sample_beacon(5001, "b")));
    }
  });
  start = std::chrono::steady_clock::now();
  const auto found = master::discover_workers(options);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  senders.join();
  ASSERT_EQ(found.workers.size(), 2u);
  EXPECT_EQ(found.workers[0].address.text(), "127.0.0.1:5000");
  EXPECT_EQ(found.workers[1].address.text(), "127.0.0.1:5001");
}

TEST(Discovery, BadBeaconTargetsAndIntervalsAreErrors) {
  asio::io_context io;
  EXPECT_THROW(worker::Beacon(io, {{}, 1000ms}, sample_beacon()), Error);
  EXPECT_THROW(worker::Beacon(io, {{{"127.0.0.1", 7199}}, 1ms}, sample_beacon()), Error);
  EXPECT_THROW(worker::Beacon(io, {{{"no-such-host.invalid", 7199}}, 1000ms}, sample_beacon()), Error);
}

// ---- real processes ----

constexpr const char* kSecret = testing::kClusterSecret;

TEST(DiscoveryWorker, DiscoveredWorkerStillMustPassTheHandshake) {
  testing::TempDir dir("discovery_worker");
  testing::write_secret(dir / "secret", kSecret);
  testing::write_secret(dir / "wrong", testing::kOtherSecret);
  std::filesystem::create_directories(dir / "scenes");
  const uint16_t port = free_udp_port();
  testing::WorkerProcess worker(dir.path(), "beaconing", dir / "scenes", dir / "secret",
                                {"--device", "host", "--threads", "1", "--beacon", "--beacon-to", "127.0.0.1:" + std::to_string(port),
                                 "--beacon-interval", "0.1"});
  ASSERT_FALSE(worker.address().empty()) << worker.log();

  master::DiscoveryOptions options;
  options.listen_host = "127.0.0.1";
  options.port = port;
  options.timeout = 5s;
  options.enough = 1;
  const auto found = master::discover_workers(options);
  ASSERT_EQ(found.workers.size(), 1u);
  EXPECT_EQ(found.workers[0].address.text(), worker.address());
  EXPECT_EQ(found.workers[0].name, "beaconing");

  // The beacon opened no door: the wrong secret is refused, the right one welcomed.
  const auto handshake = [&](const std::string& secret) {
    testing::RawClient client(found.workers[0].address.port);
    EXPECT_TRUE(client.connected());
    const std::string nonce = net::random_nonce();
    wire::Envelope hello;
    hello.mutable_hello()->set_protocol_version(net::kProtocolVersion);
    hello.mutable_hello()->set_nonce(nonce);
    client.send(hello);
    auto challenge = client.receive();
    if (!challenge || !challenge->has_challenge()) return challenge;
    wire::Envelope proof;
    proof.mutable_proof()->set_proof(
        net::make_proof(secret, net::Role::master, net::kProtocolVersion, nonce, challenge->challenge().nonce()));
    client.send(proof);
    return client.receive();
  };
  const auto refused = handshake(testing::kOtherSecret);
  EXPECT_TRUE(!refused || !refused->has_welcome());
  const auto welcome = handshake(kSecret);
  ASSERT_TRUE(welcome && welcome->has_welcome());
  EXPECT_EQ(welcome->welcome().info().name(), "beaconing");

  // tessera-master --discover: renders with the right secret, fails with the wrong one.
  const std::string master = "timeout 60 " + testing::master_binary().string() + " --discover --discover-port " + std::to_string(port) +
                             " --discover-workers 1 --discover-timeout 5 --scene " + testing::cornell_tpk().string() +
                             " --no-status --size 32x32 --tile 16 --poses camera --no-worker-timeout 1 --reconnect-interval 0 --secret-file ";
  const auto good = testing::run_command(master + (dir / "secret").string());
  EXPECT_EQ(good.exit_code, 0) << good.output;
  EXPECT_NE(good.output.find("discovered 'beaconing' at " + worker.address()), std::string::npos) << good.output;
  EXPECT_NE(good.output.find("1 frames of 32x32"), std::string::npos) << good.output;
  const auto bad = testing::run_command(master + (dir / "wrong").string());
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("tessera-master: error: "), std::string::npos) << bad.output;
}

// Beacons prove nothing: two forged ones, heard first, must not fill --discover-workers 2 and keep
// the real worker out. Discovery keeps listening until enough workers pass the handshake.
TEST(DiscoveryWorker, ForgedBeaconsDoNotCrowdOutTheRealWorker) {
  testing::TempDir dir("discovery_forged");
  testing::write_secret(dir / "secret", kSecret);
  std::filesystem::create_directories(dir / "scenes");
  const uint16_t port = free_udp_port();
  // One forged beacon names a closed port, the other a listener that accepts and never answers.
  asio::io_context io;
  asio::ip::tcp::acceptor silent(io, asio::ip::tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  const uint16_t closed_port = [] {
    asio::io_context i;
    asio::ip::tcp::acceptor a(i, asio::ip::tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    return a.local_endpoint().port();
  }();
  std::atomic<bool> forging{true};
  std::thread forger([&] {
    while (forging) {
      send_datagram(port, net::encode_beacon(sample_beacon(closed_port, "forged-1")));
      send_datagram(port, net::encode_beacon(sample_beacon(silent.local_endpoint().port(), "forged-2")));
      std::this_thread::sleep_for(20ms);
    }
  });
  testing::Process master({testing::master_binary().string(), "--discover", "--discover-port", std::to_string(port),
                           "--discover-workers", "2", "--discover-timeout", "4", "--scene", testing::cornell_tpk().string(),
                           "--no-status", "--size", "32x32", "--tile", "16", "--poses", "camera", "--no-worker-timeout", "1",
                           "--reconnect-interval", "0", "--secret-file", (dir / "secret").string()},
                          dir / "master.log");
  std::this_thread::sleep_for(800ms);  // the forged beacons are heard first
  testing::WorkerProcess worker(dir.path(), "beaconing", dir / "scenes", dir / "secret",
                                {"--device", "host", "--threads", "1", "--beacon", "--beacon-to", "127.0.0.1:" + std::to_string(port),
                                 "--beacon-interval", "0.1"});
  const auto exit_code = master.wait(60s);
  forging = false;
  forger.join();
  EXPECT_EQ(exit_code, 0) << master.log();
  EXPECT_NE(master.log().find("discovered 'beaconing' at " + worker.address()), std::string::npos) << master.log();
  EXPECT_NE(master.log().find("1 frames of 32x32"), std::string::npos) << master.log();
}

TEST(DiscoveryWorker, CommandLineErrors) {
  testing::TempDir dir("discovery_cli");
  testing::write_secret(dir / "secret", kSecret);
  const std::string master = testing::master_binary().string() + " --scene " + testing::cornell_tpk().string() + " --secret-file " +
                             (dir / "secret").string();
  const auto one_error_line = [](const testing::CommandResult& r, int code, const std::string& needle) {
    EXPECT_EQ(r.exit_code, code) << r.output;
    EXPECT_EQ(r.output.rfind("tessera-master: error: ", 0), 0u) << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  };
  one_error_line(testing::run_command(master + " --discover --workers 127.0.0.1:1"), 2, "excludes");
  one_error_line(testing::run_command(master + " --discover-timeout 1 --workers 127.0.0.1:1"), 2, "--discover");
  one_error_line(testing::run_command(master + " --quiet --discover --discover-timeout 0.3 --discover-port " +
                                      std::to_string(free_udp_port())),
                 1, "no worker beacon heard");
  const std::string worker = testing::worker_binary().string() + " --scenes " + dir.path().string() + " --secret-file " +
                             (dir / "secret").string() + " --listen 127.0.0.1:0 --beacon ";
  const auto r = testing::run_command(worker + "--beacon-to nowhere");
  EXPECT_EQ(r.exit_code, 2) << r.output;  // a usage error
  EXPECT_NE(r.output.find("tessera-worker: error: bad --beacon-to 'nowhere'"), std::string::npos) << r.output;
  EXPECT_NE(testing::run_command(testing::worker_binary().string() + " --help").output.find("--beacon"), std::string::npos);
  EXPECT_NE(testing::run_command(testing::master_binary().string() + " --help").output.find("--discover-timeout"), std::string::npos);
}

}  // namespace
}  // namespace tessera
