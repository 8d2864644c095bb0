// The live session under the link faults deploy/soak injects on one worker's link (a relay in front
// of worker b, as the soak's relay links): a partition, a loss burst, a bandwidth drop. The page's
// frames keep coming, in order, none is dropped unfinished, and the newest pose is shown once the
// link is back. (The soak's other faults: LiveSession.WorkerKilledMidSessionFramesKeepComing,
// LiveSession.FrozenWorkerHoldsFramesForASecondNotUntilItIsDropped, LiveClientReconnect.*,
// browser.live_page.master_restart; docs/soak.md lists them.)
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <thread>

#include "common/base/file_io.h"
#include "common/net/address.h"
#include "deploy/netem-relay/netem_relay.h"
#include "live_test_support.h"

namespace {

using namespace tessera;
using namespace tessera::testing::live;
using Clock = std::chrono::steady_clock;

// tessera-netem-relay's library on a thread of its own in front of one worker.
class WorkerLink {
 public:
  WorkerLink() : relay_(io_, netem::LinkProfile{}) {}
  ~WorkerLink() {
    asio::post(io_, [this] { relay_.stop(); });
    work_.reset();
    if (thread_.joinable()) thread_.join();
  }
  std::string route(const std::string& worker) {
    const uint16_t port = relay_.add_route({{"127.0.0.1", 0}, net::parse_host_port(worker, "worker")});
    thread_ = std::thread([this] { io_.run(); });
    return "127.0.0.1:" + std::to_string(port);
  }
  void set(const netem::LinkProfile& profile) {
    asio::post(io_, [this, profile] { relay_.set_profile(profile); });
  }

 private:
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{asio::make_work_guard(io_)};
  netem::Relay relay_;
  std::thread thread_;
};

// Poses every 100 ms through `span` of the fault and 3 s after it; then the newest pose's frame.
void frames_keep_coming_through(const netem::LinkProfile& fault, std::chrono::milliseconds span) {
  WorkerLink link;
  LiveMaster m({}, {"--device", "host", "--threads", "1"}, false, [&](const std::string& b) { return link.route(b); });
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  uint64_t id = 0;
  auto next_pose = [&] {
    ++id;
    d.send_text(pose_message(id, {278.0f + float(id % 20) * 5, 273, -800}).dump());
  };
  next_pose();
  ASSERT_TRUE(frame_of_pose(d, id)) << m.log();
  link.set(fault);
  const auto fault_end = Clock::now() + span, end = fault_end + 3s;
  std::vector<uint64_t> frames;
  size_t during = 0;
  bool cleared = false;
  while (Clock::now() < end) {
    if (!cleared && Clock::now() >= fault_end) {
      link.set(netem::LinkProfile{});
      cleared = true;
    }
    next_pose();
    const auto until = Clock::now() + 100ms;
    while (Clock::now() < until) {
      auto msg = d.receive(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()) + 1ms);
      if (!msg) break;
      if (!msg->binary) continue;
      frames.push_back(unpack_frame_message(msg->data).header["frame"].get<uint64_t>());
      during += !cleared;
    }
  }
  next_pose();
  EXPECT_TRUE(frame_of_pose(d, id, 10s)) << "the newest pose was not shown after the fault\n" << m.log();
  EXPECT_GT(during, 0u) << "no frame while one worker's link was faulty\n" << m.log();
  for (size_t i = 1; i < frames.size(); ++i) EXPECT_LT(frames[i - 1], frames[i]) << "frames out of order or twice";
  const std::string log = m.log();
  for (size_t at = log.find("skipped, not written"); at != std::string::npos; at = log.find("skipped, not written", at + 1))
    EXPECT_NE(log.substr(at, log.find('\n', at) - at).find("superseded"), std::string::npos) << "a frame was lost\n" << log;
}

TEST(LiveLinkFaults, PartitionedWorkerFramesKeepComingAndTheNewestPoseIsShownAfter) {
  netem::LinkProfile fault;
  fault.partitioned = true;
  frames_keep_coming_through(fault, 3s);
}

TEST(LiveLinkFaults, LossBurstOnAWorkersLinkFramesKeepComingInOrder) {
  netem::LinkProfile fault;
  fault.loss = 0.2;
  frames_keep_coming_through(fault, 3s);
}

TEST(LiveLinkFaults, BandwidthDropOnAWorkersLinkFramesKeepComingInOrder) {
  netem::LinkProfile fault;
  fault.rate_bits_per_s = 2e6;
  frames_keep_coming_through(fault, 3s);
}

}  // namespace

namespace {

// The page's link: tessera-netem-relay in front of the master's port, stopped and started again on
// the same port (a phone whose Wi-Fi dropped and came back). The port is below the ephemeral range
// (32768 up), so no outgoing connection (the page's own attempts included) takes it meanwhile.
class PageLink {
 public:
  PageLink(const std::filesystem::path& dir, uint16_t master_port) : dir_(dir), master_port_(master_port) {
    for (port = uint16_t(20000 + ::getpid() % 10000); port < 32000 && !start(); port += 7) {
    }
  }
  bool start() {
    const auto port_file = dir_ / "page-link.port";
    std::filesystem::remove(port_file);
    relay_.emplace(std::vector<std::string>{(tessera::testing::binary_dir() / "deploy" / "netem-relay" / "tessera-netem-relay").string(),
                                            "--route", "127.0.0.1:" + std::to_string(port) + "=127.0.0.1:" + std::to_string(master_port_),
                                            "--port-file", port_file.string()},
                   dir_ / "page-link.log");
    for (int i = 0; i < 500; ++i) {
      if (std::filesystem::exists(port_file)) return true;
      if (relay_->wait(10ms)) return false;  // the port is taken: the caller tries another
    }
    return false;
  }
  void stop() {
    relay_->signal(SIGTERM);
    relay_->wait(5s);
  }
  uint16_t port = 0;

 private:
  std::filesystem::path dir_;
  uint16_t master_port_;
  std::optional<tessera::testing::Process> relay_;
};

std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells;
    std::istringstream cell_stream(line);
    for (std::string cell; std::getline(cell_stream, cell, ',');) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(cells);
  }
  return rows;
}

// tessera-live-client --reconnect --frames-log: the page's link is cut for 1.5 s mid-session; the
// client connects again by itself and goes on, and its log has every frame of both connections,
// frame numbers rising within each, latencies on the first frames of poses.
TEST(LiveClientReconnect, PageLinkCutTheClientReconnectsAndLogsEveryFrame) {
  LiveMaster m;
  ASSERT_NE(m.port, 0) << m.log();
  PageLink link(m.dir.path(), m.port);
  const auto frames_log = m.dir / "frames.csv";
  tessera::testing::Process client({(tessera::testing::binary_dir() / "master" / "tessera-live-client").string(),
                                    "https://127.0.0.1:" + std::to_string(link.port) + "/?token=" + kToken, "--duration", "7",
                                    "--rate", "10", "--reconnect", "--no-decode", "--frames-log", frames_log.string(), "--json"},
                                   m.dir / "client.log");
  std::this_thread::sleep_for(3s);
  link.stop();
  std::this_thread::sleep_for(1500ms);
  ASSERT_TRUE(link.start()) << "the page's link could not listen again on its port";
  const auto code = client.wait(30s);
  ASSERT_TRUE(code) << client.log();
  ASSERT_EQ(*code, 0) << client.log() << m.log();
  const std::string out = client.log();
  const json result = json::parse(out.substr(out.find("\n{") == std::string::npos ? out.find('{') : out.find("\n{") + 1));
  EXPECT_GE(result["reconnects"].get<int>(), 1) << out;
  EXPECT_GE(result["connections"].get<int>(), 2) << out;
  const auto rows = csv_rows(read_file_text(frames_log));
  ASSERT_GT(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"unix_ms", "connection", "frame", "pose_id", "samples", "latency_ms"}));
  std::map<std::string, uint64_t> last_frame;
  size_t latencies = 0, second_connection = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 6u) << "row " << i;
    const uint64_t frame = std::stoull(rows[i][2]);
    if (last_frame.count(rows[i][1])) {
      EXPECT_LT(last_frame[rows[i][1]], frame) << "row " << i;
    }
    last_frame[rows[i][1]] = frame;
    latencies += !rows[i][5].empty();
    second_connection += rows[i][1] == "2";
  }
  EXPECT_GT(second_connection, 0u) << "no frame after the reconnect";
  EXPECT_GT(latencies, 3u);
}

}  // namespace
