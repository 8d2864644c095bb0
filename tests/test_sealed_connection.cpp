// Sealed connections with sealing and opening spread over threads (common/net/connection.h):
// frames sealed on many sending threads still leave in sequence order, large frames opened on a
// pool still reach the handler in arrival order, and a sealed frame that was altered, replayed,
// reordered or dropped still ends the connection when it is opened on the pool.
#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "cluster_test_support.h"
#include "common/base/error.h"
#include "common/base/task_pool.h"
#include "common/net/asio.h"
#include "common/net/auth.h"
#include "common/net/connection.h"
#include "common/net/frame_cipher.h"
#include "common/net/framing.h"
#include "common/net/message_limits.h"
#include "common/net/protocol.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;

net::SessionKeys test_keys() {
  return net::derive_session_keys(testing::kClusterSecret, net::kProtocolVersion, std::string(32, 'm'), std::string(32, 'w'));
}

// A tile result of `bytes` of data: above Connection::kPooledOpenBytes it is opened on the pool.
wire::Envelope tile_message(uint64_t frame, uint32_t tile, size_t bytes) {
  wire::Envelope m;
  auto& r = *m.mutable_tile_result();
  r.set_frame_id(frame);
  r.set_tile_id(tile);
  r.set_data(std::string(bytes, char('a' + tile % 26)));
  return m;
}

// Two ends of a loopback TCP connection on one io thread; `master` reads with a pool.
struct Loopback {
  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work{io.get_executor()};
  asio::ip::tcp::socket worker_socket{io}, master_socket{io};
  TaskPool pool{2};
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<wire::Envelope> received;  // by the master, in handler order
  std::optional<std::string> closed;     // the master's close reason
  std::thread thread;

  Loopback() {
    asio::ip::tcp::acceptor acceptor(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    worker_socket.connect(acceptor.local_endpoint());
    acceptor.accept(master_socket);
  }
  ~Loopback() {
    work.reset();
    io.stop();
    if (thread.joinable()) thread.join();
  }
  // The master's end, sealed and reading on the pool.
  std::shared_ptr<net::Connection> start_master() {
    auto master = net::Connection::create(std::move(master_socket));
    master->set_open_pool(&pool);
    master->seal_session(test_keys(), net::Role::master);
    master->set_frame_limit(net::kMaxFrameBytes);
    master->start(
        [this](wire::Envelope& m) {
          std::lock_guard lock(mutex);
          received.push_back(std::move(m));
          changed.notify_all();
        },
        [this](const std::string& reason) {
          std::lock_guard lock(mutex);
          closed = reason;
          changed.notify_all();
        });
    thread = std::thread([this] { io.run(); });
    return master;
  }
  template <class Done>
  bool wait(Done done, std::chrono::milliseconds limit = 20s) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, limit, done);
  }
};

TEST(SealedConnection, FramesSealedOnManyThreadsArriveInOrderAndOpenOnThePool) {
  Loopback loop;
  auto master = loop.start_master();
  auto worker = net::Connection::create(std::move(loop.worker_socket));
  worker->seal_session(test_keys(), net::Role::worker);
  worker->start([](wire::Envelope&) {}, [](const std::string&) {});
  // Four threads each send 60 tiles, large and small mixed, so frames finish sealing out of the
  // order they were started in and large frames open on the pool behind small ones opened at once.
  constexpr int kThreads = 4, kEach = 60;
  std::vector<std::thread> senders;
  for (int t = 0; t < kThreads; ++t)
    senders.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) worker->send(tile_message(uint64_t(t), uint32_t(i), i % 3 == 0 ? 300 * 1024 : 200 + i));
    });
  for (auto& s : senders) s.join();
  ASSERT_TRUE(loop.wait([&] { return loop.received.size() == kThreads * kEach || loop.closed; })) << loop.received.size();
  std::lock_guard lock(loop.mutex);
  ASSERT_FALSE(loop.closed) << *loop.closed;
  std::map<uint64_t, uint32_t> next;  // per sending thread: the tile expected next
  for (const auto& m : loop.received) {
    ASSERT_TRUE(m.has_tile_result());
    const auto& r = m.tile_result();
    EXPECT_EQ(r.tile_id(), next[r.frame_id()]++) << "thread " << r.frame_id();
    EXPECT_EQ(r.data().size(), r.tile_id() % 3 == 0 ? 300u * 1024 : 200u + r.tile_id());
    EXPECT_EQ(r.data()[0], char('a' + r.tile_id() % 26));
  }
  worker->close("done");
}

// Frames a peer on the path put on the wire: sealed as the worker seals them, then sent raw.
struct RawSender {
  net::FrameSealer sealer{test_keys().worker_to_master};
  std::vector<std::vector<uint8_t>> frames;
  RawSender() {
    for (uint32_t i = 0; i < 3; ++i) {
      auto frame = net::encode_frame(tile_message(7, i, 200 * 1024));
      sealer.seal(frame);
      frames.push_back(std::move(frame));
    }
  }
};

// What the master handled before the stream of `frames` ended its connection, and why it ended.
std::pair<std::vector<uint32_t>, std::string> deliver(const std::vector<std::vector<uint8_t>>& frames) {
  Loopback loop;
  auto master = loop.start_master();
  asio::error_code ignored;  // the master may close before it read everything
  for (const auto& frame : frames) asio::write(loop.worker_socket, asio::buffer(frame), ignored);
  EXPECT_TRUE(loop.wait([&] { return loop.closed.has_value(); }, 10s)) << "the connection stayed open";
  std::lock_guard lock(loop.mutex);
  std::vector<uint32_t> tiles;
  for (const auto& m : loop.received) tiles.push_back(m.tile_result().tile_id());
  return {tiles, loop.closed.value_or("")};
}

TEST(SealedConnection, PoolOpenedFramesAlteredReplayedReorderedOrDroppedEndTheConnection) {
  const RawSender s;
  const auto& f = s.frames;
  {
    Loopback loop;  // all three in order open and arrive
    auto master = loop.start_master();
    for (const auto& frame : f) asio::write(loop.worker_socket, asio::buffer(frame));
    ASSERT_TRUE(loop.wait([&] { return loop.received.size() == 3 || loop.closed; }));
    EXPECT_FALSE(loop.closed);
  }
  const auto ends = [](const std::pair<std::vector<uint32_t>, std::string>& r, std::vector<uint32_t> handled) {
    EXPECT_EQ(r.first, handled);
    EXPECT_NE(r.second.find("does not authenticate"), std::string::npos) << r.second;
  };
  ends(deliver({f[1], f[0], f[2]}), {});      // reordered: nothing is handled
  ends(deliver({f[0], f[0], f[1]}), {0});     // replayed
  ends(deliver({f[0], f[2], f[1]}), {0});     // one dropped
  for (size_t at : {size_t(4096), f[1].size() - 1}) {  // body, tag
    auto tampered = f;
    tampered[1][at] ^= 0x01;
    SCOPED_TRACE(at);
    ends(deliver(tampered), {0});
  }
  {  // A length 256 bytes off: the frame does not open, and the reader, which reads on while it
     // opens, may meet the garbage "header" inside the next frame first. Either way the
     // connection ends and nothing from the altered frame on reaches the handler.
    auto tampered = f;
    tampered[1][1] ^= 0x01;
    const auto [handled, reason] = deliver(tampered);
    EXPECT_TRUE(handled.empty() || handled == std::vector<uint32_t>{0}) << handled.size();
    EXPECT_TRUE(reason.find("does not authenticate") != std::string::npos || reason.find("exceeds the limit") != std::string::npos)
        << reason;
  }
}

TEST(SealedConnection, TicketsAreSingleUseAndOpenInAnyThreadOrder) {
  const auto keys = test_keys();
  net::FrameSealer sealer(keys.worker_to_master);
  std::vector<net::SealTicket> tickets;
  for (int i = 0; i < 8; ++i) tickets.push_back(sealer.next());
  std::vector<std::vector<uint8_t>> frames(8);
  std::vector<std::thread> threads;
  for (int i = 7; i >= 0; --i)  // sealed last first, on eight threads
    threads.emplace_back([&, i] {
      frames[size_t(i)] = net::encode_frame(tile_message(1, uint32_t(i), 1000));
      sealer.seal(frames[size_t(i)], std::move(tickets[size_t(i)]));
    });
  for (auto& t : threads) t.join();
  // A used ticket cannot seal a second frame under the same nonce.
  auto again = net::encode_frame(tile_message(1, 9, 10));
  EXPECT_THROW(sealer.seal(again, std::move(tickets[0])), Error);
  net::FrameOpener opener(keys.worker_to_master);
  std::vector<net::SealTicket> open_tickets;
  for (int i = 0; i < 8; ++i) open_tickets.push_back(opener.next());
  for (int i = 7; i >= 0; --i) {  // opened in reverse, each with its arrival-order ticket
    std::vector<uint8_t> payload(frames[size_t(i)].begin() + 4, frames[size_t(i)].end());
    opener.open(std::span<const uint8_t, 4>(frames[size_t(i)].data(), 4), payload, std::move(open_tickets[size_t(i)]));
    EXPECT_EQ(net::decode_body(payload).tile_result().tile_id(), uint32_t(i));
  }
}

}  // namespace
}  // namespace tessera
