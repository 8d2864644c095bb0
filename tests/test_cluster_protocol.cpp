// The wire protocol against a real tessera-worker, as a broken or hostile peer would speak it:
// wrong secret, no secret, wrong version, garbage, oversized or out-of-order messages; each ends
// only that connection, with a reason on both sides, while the worker keeps serving others.
#include <gtest/gtest.h>

#include <thread>

#include "cluster_test_support.h"
#include "common/base/hash.h"
#include "common/base/version.h"
#include "common/net/auth.h"
#include "common/net/protocol.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;
using testing::RawClient;
using testing::TempDir;
using testing::WorkerProcess;

constexpr const char* kSecret = testing::kClusterSecret;

struct OneWorker {
  TempDir dir{"cluster_protocol"};
  std::filesystem::path secret = dir / "secret";
  std::optional<WorkerProcess> worker;
  OneWorker() {
    testing::write_secret(secret, kSecret);
    std::filesystem::create_directories(dir / "scenes");
    worker.emplace(dir.path(), "w", dir / "scenes", secret);
  }
  uint16_t port() const { return worker->port(); }
  std::string log() const { return worker->log(); }
  bool log_has(const std::string& text) const {
    for (int i = 0; i < 100; ++i) {
      if (log().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
};

wire::Envelope hello(uint32_t version, const std::string& nonce) {
  wire::Envelope m;
  m.mutable_hello()->set_protocol_version(version);
  m.mutable_hello()->set_nonce(nonce);
  return m;
}

// Runs the handshake with `secret`; returns the worker's answer to the master's proof.
std::optional<wire::Envelope> handshake(RawClient& client, const std::string& secret) {
  const std::string nonce = net::random_nonce();
  client.send(hello(net::kProtocolVersion, nonce));
  auto challenge = client.receive();
  if (!challenge || !challenge->has_challenge()) return challenge;
  wire::Envelope proof;
  proof.mutable_proof()->set_proof(
      secret.empty() ? "" : net::make_proof(secret, net::Role::master, net::kProtocolVersion, nonce, challenge->challenge().nonce()));
  client.send(proof);
  auto answer = client.receive();
  if (answer && answer->has_welcome()) {  // the worker proves the secret only now, to a master that proved it
    EXPECT_TRUE(net::check_proof(kSecret, net::Role::worker, net::kProtocolVersion, nonce, challenge->challenge().nonce(),
                                 answer->welcome().proof()));
  }
  return answer;
}

TEST(ClusterProtocol, HandshakeWithTheSecretIsWelcomed) {
  OneWorker w;
  RawClient client(w.port());
  const auto welcome = handshake(client, kSecret);
  ASSERT_TRUE(welcome && welcome->has_welcome());
  EXPECT_EQ(welcome->welcome().info().name(), "w");
  EXPECT_EQ(welcome->welcome().info().version(), build_description());  // the text of --version
  ASSERT_EQ(welcome->welcome().info().modes_size(), 3);
  EXPECT_EQ(welcome->welcome().info().modes(0), "raytrace");
  EXPECT_EQ(welcome->welcome().info().modes(1), "pathtrace");
  EXPECT_EQ(welcome->welcome().info().modes(2), "vct");
}

TEST(ClusterProtocol, WrongOrMissingSecretIsRefusedWithAReason) {
  OneWorker w;
  {
    RawClient client(w.port());
    const auto answer = handshake(client, testing::kOtherSecret);
    ASSERT_TRUE(answer && answer->has_refused());
    EXPECT_EQ(answer->refused().reason(), "authentication failed: wrong shared secret");
    EXPECT_TRUE(client.closed_by_peer());
  }
  {
    RawClient client(w.port());
    const auto answer = handshake(client, "");
    ASSERT_TRUE(answer && answer->has_refused());
    EXPECT_NE(answer->refused().reason().find("no secret proof"), std::string::npos);
  }
  EXPECT_TRUE(w.log_has("refused: authentication failed: wrong shared secret")) << w.log();
}

TEST(ClusterProtocol, WrongVersionIsRefusedWithAReason) {
  OneWorker w;
  RawClient client(w.port());
  client.send(hello(99, net::random_nonce()));
  const auto answer = client.receive();
  ASSERT_TRUE(answer && answer->has_refused());
  EXPECT_EQ(answer->refused().reason(), "protocol version mismatch: the master speaks version 99, this worker speaks version " +
                                            std::to_string(net::kProtocolVersion));
  EXPECT_TRUE(client.closed_by_peer());
  EXPECT_TRUE(w.log_has("protocol version mismatch")) << w.log();
}

// A fake worker that answers with another protocol version: the master refuses it, says why.
TEST(ClusterProtocol, MasterRefusesAWorkerOfAnotherVersion) {
  TempDir dir("cluster_version");
  testing::write_secret(dir / "secret", kSecret);
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t length = sizeof a;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &length);
  const uint16_t port = ntohs(a.sin_port);
  std::string refusal;
  std::thread fake([&] {
    const int fd = ::accept(listener, nullptr, nullptr);
    uint8_t header[4];
    if (::recv(fd, header, 4, MSG_WAITALL) != 4) return;
    std::vector<uint8_t> body(size_t{uint32_t(header[0]) | uint32_t(header[1]) << 8 | uint32_t(header[2]) << 16});
    ::recv(fd, body.data(), body.size(), MSG_WAITALL);
    wire::Envelope challenge;
    challenge.mutable_challenge()->set_protocol_version(99);
    challenge.mutable_challenge()->set_nonce(std::string(net::kNonceBytes, 'x'));
    const auto frame = net::encode_frame(challenge);
    ::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL);
    if (::recv(fd, header, 4, MSG_WAITALL) == 4) {
      body.resize(uint32_t(header[0]) | uint32_t(header[1]) << 8);
      ::recv(fd, body.data(), body.size(), MSG_WAITALL);
      wire::Envelope m;
      if (m.ParseFromArray(body.data(), int(body.size())) && m.has_refused()) refusal = m.refused().reason();
    }
    ::close(fd);
  });
  const auto r = testing::run_command("timeout 30 " + testing::master_binary().string() + " --workers 127.0.0.1:" + std::to_string(port) +
                                      " --scene " + testing::cornell_tpk().string() + " --secret-file " + (dir / "secret").string() +
                                      " --poses orbit --frames 1 --no-status --reconnect-interval 0");
  fake.join();
  ::close(listener);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("protocol version mismatch: the worker speaks version 99, this master speaks version " +
                          std::to_string(net::kProtocolVersion)),
            std::string::npos)
      << r.output;
  EXPECT_NE(refusal.find("protocol version mismatch"), std::string::npos) << refusal;
}

TEST(ClusterProtocol, GarbageOversizedAndOutOfOrderEndOnlyThatConnection) {
  OneWorker w;
  testing::SealedClient healthy(w.port(), kSecret);  // connected first, authenticated, used at the end
  ASSERT_TRUE(healthy.ready());
  {
    RawClient client(w.port());  // a length prefix far beyond any limit
    client.send_bytes({0xff, 0xff, 0xff, 0xff});
    const auto error = client.receive();
    ASSERT_TRUE(error && error->has_error());
    EXPECT_TRUE(error->error().fatal());
    EXPECT_NE(error->error().message().find("exceeds the limit"), std::string::npos) << error->error().message();
    EXPECT_TRUE(client.closed_by_peer());
  }
  {
    RawClient client(w.port());  // not our protocol at all
    client.send_bytes(std::vector<uint8_t>{'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P', '/', '1', '.', '1', '\r', '\n', '\r', '\n'});
    EXPECT_TRUE(client.closed_by_peer());
  }
  {
    RawClient client(w.port());  // a plausible length with junk behind it
    std::vector<uint8_t> junk{12, 0, 0, 0};
    for (int i = 0; i < 12; ++i) junk.push_back(uint8_t(0xf7 + i));
    client.send_bytes(junk);
    const auto error = client.receive();
    ASSERT_TRUE(error && error->has_error());
    EXPECT_NE(error->error().message().find("malformed"), std::string::npos) << error->error().message();
    EXPECT_TRUE(client.closed_by_peer());
  }
  {
    RawClient client(w.port());  // a frame request before the handshake
    wire::Envelope m;
    m.mutable_frame_request()->set_frame_id(1);
    client.send(m);
    const auto error = client.receive();
    ASSERT_TRUE(error && error->has_error());
    EXPECT_EQ(error->error().message(), "expected hello, got frame_request");
    EXPECT_TRUE(client.closed_by_peer());
  }
  {
    testing::SealedClient client(w.port(), kSecret);  // authenticated, then a message over its type's limit
    ASSERT_TRUE(client.ready());
    wire::Envelope m;
    m.mutable_cancel_frame()->set_frame_id(1);
    std::string big(100000, 'x');
    // An unknown field inflates the CancelFrame beyond its 4 KiB limit.
    auto* unknown = m.mutable_cancel_frame()->GetReflection()->MutableUnknownFields(m.mutable_cancel_frame());
    unknown->AddLengthDelimited(999, big);
    std::vector<uint8_t> frame(4 + m.ByteSizeLong());
    const uint32_t size = uint32_t(m.ByteSizeLong());
    for (int i = 0; i < 4; ++i) frame[size_t(i)] = uint8_t(size >> (8 * i));
    m.SerializeToArray(frame.data() + 4, int(size));
    client.send_plain_frame(frame);
    const auto error = client.receive();
    ASSERT_TRUE(error && error->has_error());
    EXPECT_NE(error->error().message().find("cancel_frame of"), std::string::npos) << error->error().message();
    EXPECT_TRUE(client.closed_by_peer());
  }
  // The worker logged each reason and still serves the healthy connection.
  EXPECT_TRUE(w.log_has("exceeds the limit")) << w.log();
  EXPECT_TRUE(w.log_has("malformed message")) << w.log();
  wire::Envelope stats;
  stats.mutable_stats_request();
  ASSERT_TRUE(healthy.send(stats));
  const auto reply = healthy.receive();
  ASSERT_TRUE(reply && reply->has_worker_stats()) << w.log();
  RawClient later(w.port());
  EXPECT_TRUE(handshake(later, kSecret)->has_welcome());
}

TEST(ClusterProtocol, AFloodOfRequestsIsCutOffAndTheWorkerKeepsServing) {
  OneWorker w;
  std::filesystem::copy_file(testing::cornell_tpk(), w.dir / "scenes" / "c.tpk");
  w.worker.reset();  // restart so that the scene is indexed
  w.worker.emplace(w.dir.path(), "w2", w.dir / "scenes", w.secret);
  testing::SealedClient client(w.port(), kSecret);
  ASSERT_TRUE(client.ready());
  const auto bytes = read_file_bytes(testing::cornell_tpk());
  wire::Envelope load;
  load.mutable_load_scene()->set_content_hash(hash64(bytes.data(), bytes.size()));
  client.send(load);
  const auto status = client.receive();
  ASSERT_TRUE(status && status->has_scene_status());
  ASSERT_EQ(status->scene_status().state(), wire::SceneStatus::READY);
  // Frame requests for thousands of tiles each, never reading the answers: the worker bounds
  // what one connection may queue and ends it.
  bool sent_all = true;
  for (uint64_t id = 1; id <= 200 && sent_all; ++id) {
    wire::Envelope m;
    auto& r = *m.mutable_frame_request();
    r.set_frame_id(id);
    r.set_scene_hash(load.load_scene().content_hash());
    r.mutable_pose()->mutable_orientation()->set_w(1);
    r.mutable_eyes()->set_layout(wire::Eyes::MONO);
    r.mutable_projection()->set_vertical_fov_degrees(40);
    r.mutable_image()->set_width(4096);
    r.mutable_image()->set_height(4096);
    r.mutable_image()->set_tile_size(8);
    r.set_reply(wire::BATCH);
    r.set_encoding(wire::RAW_RGBA8);
    r.mutable_raytrace()->set_max_depth(1);
    for (uint32_t t = 0; t < 20000; ++t) r.add_tiles(t);
    sent_all = client.send(m);
  }
  EXPECT_TRUE(client.closed_by_peer(10s));
  EXPECT_TRUE(w.log_has("in flight on one connection") || w.log_has("queued on one connection")) << w.log();
  RawClient later(w.port());
  EXPECT_TRUE(handshake(later, kSecret)->has_welcome()) << w.log();
}

TEST(ClusterProtocol, PushedSceneWithTheWrongHashIsRejected) {
  OneWorker w;
  testing::SealedClient client(w.port(), kSecret);
  ASSERT_TRUE(client.ready());
  const auto bytes = read_file_bytes(testing::cornell_tpk());
  wire::Envelope load;
  load.mutable_load_scene()->set_content_hash(hash64(bytes.data(), bytes.size()) ^ 1);  // announced hash differs
  load.mutable_load_scene()->set_name("evil.tpk");
  load.mutable_load_scene()->set_size_bytes(bytes.size());
  client.send(load);
  auto status = client.receive();
  ASSERT_TRUE(status && status->has_scene_status());
  ASSERT_EQ(status->scene_status().state(), wire::SceneStatus::MISSING);
  wire::Envelope chunk;
  chunk.mutable_scene_chunk()->set_content_hash(load.load_scene().content_hash());
  chunk.mutable_scene_chunk()->set_total_size(bytes.size());
  chunk.mutable_scene_chunk()->set_data(bytes.data(), bytes.size());
  chunk.mutable_scene_chunk()->set_last(true);
  client.send(chunk);
  status = client.receive();
  ASSERT_TRUE(status && status->has_scene_status());
  EXPECT_EQ(status->scene_status().state(), wire::SceneStatus::FAILED);
  EXPECT_NE(status->scene_status().message().find("not the announced"), std::string::npos) << status->scene_status().message();
  // Nothing was kept in the scene folder.
  size_t files = 0;
  for ([[maybe_unused]] const auto& item : std::filesystem::directory_iterator(w.dir / "scenes")) ++files;
  EXPECT_EQ(files, 0u);
}

}  // namespace
}  // namespace tessera
