// tessera-netem-relay's library: delay and jitter are applied, bytes and their order are kept,
// the shared rate limits throughput, and option text is parsed strictly.
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <thread>

#include "deploy/netem-relay/netem_relay.h"

namespace {

using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Blocking echo server on 127.0.0.1 for one connection, on a thread of its own.
class EchoServer {
 public:
  EchoServer() : acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    thread_ = std::thread([this] {
      std::error_code ec;
      tcp::socket socket(io_);
      acceptor_.accept(socket, ec);
      if (ec) return;
      std::vector<char> buffer(8192);
      for (;;) {
        const size_t n = socket.read_some(asio::buffer(buffer), ec);
        if (ec) break;
        asio::write(socket, asio::buffer(buffer.data(), n), ec);
        if (ec) break;
      }
    });
  }
  ~EchoServer() {
    std::error_code ignored;
    acceptor_.close(ignored);
    thread_.join();
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
};

// A relay on its own io thread in front of an echo server.
struct RelayedEcho {
  explicit RelayedEcho(tessera::netem::LinkProfile profile) : relay(io, profile) {
    port = relay.add_route({{"127.0.0.1", 0}, {"127.0.0.1", server.port()}});
    thread = std::thread([this] { io.run(); });
  }
  ~RelayedEcho() {
    asio::post(io, [this] { relay.stop(); });
    work.reset();
    thread.join();
  }
  tcp::socket connect() {
    tcp::socket socket(client_io);
    socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    socket.set_option(tcp::no_delay(true));
    return socket;
  }
  EchoServer server;
  asio::io_context io, client_io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work{asio::make_work_guard(io)};
  tessera::netem::Relay relay;
  uint16_t port = 0;
  std::thread thread;
};

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

TEST(NetemRelay, DelaysEachDirectionAndKeepsBytesInOrder) {
  tessera::netem::LinkProfile profile;
  profile.delay = 20ms;
  profile.jitter = 10ms;
  RelayedEcho echo(profile);
  tcp::socket socket = echo.connect();

  // Round trip of one small message: both directions are held 10..30 ms.
  const char ping[] = "ping";
  auto start = Clock::now();
  asio::write(socket, asio::buffer(ping, 4));
  char pong[4];
  asio::read(socket, asio::buffer(pong, 4));
  const double rtt = ms_since(start);
  EXPECT_EQ(std::string(pong, 4), "ping");
  EXPECT_GE(rtt, 19.0);
  EXPECT_LT(rtt, 500.0);

  // Many small writes in quick succession (each its own chunk with its own jitter) come back
  // whole and in order.
  std::vector<uint8_t> sent(200 * 1000);
  std::iota(sent.begin(), sent.end(), uint8_t(0));
  for (size_t i = 0; i < sent.size(); i += 1000) sent[i] = uint8_t(i / 1000);
  std::thread writer([&] {
    for (size_t i = 0; i < sent.size(); i += 1000) asio::write(socket, asio::buffer(sent.data() + i, 1000));
  });
  std::vector<uint8_t> received(sent.size());
  asio::read(socket, asio::buffer(received));
  writer.join();
  EXPECT_EQ(received, sent);
  EXPECT_EQ(echo.relay.counters().connections, 1u);
}

TEST(NetemRelay, SharedRateLimitsThroughput) {
  tessera::netem::LinkProfile profile;
  profile.rate_bits_per_s = 40e6;  // 5 MB/s, shared by both directions
  RelayedEcho echo(profile);
  tcp::socket socket = echo.connect();
  std::vector<char> data(500 * 1000, 'x');
  const auto start = Clock::now();
  std::thread writer([&] { asio::write(socket, asio::buffer(data)); });
  std::vector<char> back(data.size());
  asio::read(socket, asio::buffer(back));
  writer.join();
  // 1 MB (there and back) over 5 MB/s: at least ~200 ms.
  EXPECT_GE(ms_since(start), 180.0);
  EXPECT_EQ(back, data);
}

TEST(NetemRelay, ParsesDurationsAndRates) {
  using tessera::netem::parse_duration;
  using tessera::netem::parse_rate;
  EXPECT_EQ(parse_duration("5", "d"), 5000us);
  EXPECT_EQ(parse_duration("2.5ms", "d"), 2500us);
  EXPECT_EQ(parse_duration("300us", "d"), 300us);
  EXPECT_EQ(parse_duration("0.01s", "d"), 10000us);
  EXPECT_DOUBLE_EQ(parse_rate("300mbit", "r"), 300e6);
  EXPECT_DOUBLE_EQ(parse_rate("54Mbit", "r"), 54e6);
  EXPECT_DOUBLE_EQ(parse_rate("1gbit", "r"), 1e9);
  EXPECT_THROW(parse_duration("-1ms", "d"), std::invalid_argument);
  EXPECT_THROW(parse_duration("5 parsecs", "d"), std::invalid_argument);
  EXPECT_THROW(parse_rate("fast", "r"), std::invalid_argument);
  EXPECT_THROW(parse_rate("3mbyte", "r"), std::invalid_argument);
}

// deploy/soak's link faults, set while connections are open: a partition passes nothing (both
// ways) and keeps the connection, which carries on when it ends; lost chunks are held a
// retransmission time; the --control words parse strictly.
TEST(NetemRelay, PartitionPassesNothingUntilItEndsAndKeepsTheConnection) {
  RelayedEcho echo(tessera::netem::LinkProfile{});
  tcp::socket socket = echo.connect();
  char back[4];
  asio::write(socket, asio::buffer("one!", 4));
  asio::read(socket, asio::buffer(back, 4));
  tessera::netem::LinkProfile partitioned;
  partitioned.partitioned = true;
  asio::post(echo.io, [&] { echo.relay.set_profile(partitioned); });
  std::this_thread::sleep_for(50ms);
  const auto start = Clock::now();
  asio::write(socket, asio::buffer("two!", 4));
  std::thread heal([&] {
    std::this_thread::sleep_for(400ms);
    asio::post(echo.io, [&] { echo.relay.set_profile(tessera::netem::LinkProfile{}); });
  });
  asio::read(socket, asio::buffer(back, 4));
  heal.join();
  EXPECT_GE(ms_since(start), 380.0);
  EXPECT_EQ(std::string(back, 4), "two!");
  EXPECT_EQ(echo.relay.counters().connections, 1u);
}

TEST(NetemRelay, LostChunksAreHeldARetransmissionTime) {
  tessera::netem::LinkProfile lossy;
  lossy.loss = 1.0;  // every chunk, both ways
  lossy.retransmit = 150ms;
  RelayedEcho echo(lossy);
  tcp::socket socket = echo.connect();
  const auto start = Clock::now();
  asio::write(socket, asio::buffer("ping", 4));
  char back[4];
  asio::read(socket, asio::buffer(back, 4));
  EXPECT_GE(ms_since(start), 290.0);
  EXPECT_EQ(std::string(back, 4), "ping");
}

TEST(NetemRelay, ControlWordsSetTheLinkAndBadOnesAreRefused) {
  using tessera::netem::parse_profile_words;
  tessera::netem::LinkProfile base;
  base.delay = 5ms;
  const auto p = parse_profile_words("loss=20% rate=2mbit partition=on\n", base);
  EXPECT_DOUBLE_EQ(p.loss, 0.2);
  EXPECT_DOUBLE_EQ(p.rate_bits_per_s, 2e6);
  EXPECT_TRUE(p.partitioned);
  EXPECT_EQ(p.delay, 5000us);  // the command line's, kept
  const auto cleared = parse_profile_words("", base);
  EXPECT_FALSE(cleared.partitioned);
  EXPECT_EQ(cleared.loss, 0.0);
  EXPECT_THROW(parse_profile_words("loss=120%", base), std::invalid_argument);
  EXPECT_THROW(parse_profile_words("partition=maybe", base), std::invalid_argument);
  EXPECT_THROW(parse_profile_words("speed=fast", base), std::invalid_argument);
  EXPECT_THROW(parse_profile_words("loss", base), std::invalid_argument);
  EXPECT_THROW(parse_profile_words("jitter=10ms", base), std::invalid_argument);  // more than the delay
}

}  // namespace
