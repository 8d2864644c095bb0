// The security pieces of the wire protocol in-process: the handshake state machines
// (common/net/handshake.h), sealed frames (frame_cipher.h), secrets and session keys (auth.h),
// peer text in logs (peer_text.h, log.h), and an authenticated session against a real worker.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <thread>

#include "cluster_test_support.h"
#include "common/base/error.h"
#include "common/net/auth.h"
#include "common/net/frame_cipher.h"
#include "common/net/framing.h"
#include "common/net/handshake.h"
#include "common/net/log.h"
#include "common/net/peer_text.h"
#include "common/net/protocol.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;
using Kind = net::HandshakeStep::Kind;

struct Handshaken {
  net::SessionKeys master, worker;
  wire::WorkerInfo info;
};

// Both state machines talking to each other; the worker's refusals end it.
std::optional<Handshaken> run_handshake(const std::string& master_secret, const std::string& worker_secret) {
  net::MasterHandshake master(master_secret, "m");
  net::WorkerHandshake worker(worker_secret, "w");
  auto challenge = worker.on_message(master.hello());
  EXPECT_EQ(challenge.kind, Kind::reply);
  auto proof = master.on_message(*challenge.message);
  EXPECT_EQ(proof.kind, Kind::reply);
  auto welcome = worker.on_message(*proof.message);
  if (welcome.kind != Kind::authenticated) return std::nullopt;
  welcome.message->mutable_welcome()->mutable_info()->set_name("worker-w");
  const auto done = master.on_message(*welcome.message);
  if (done.kind != Kind::authenticated) return std::nullopt;
  return Handshaken{master.session_keys(), worker.session_keys(), master.worker_info()};
}

TEST(WireSecurity, HandshakeAgreesOnKeysAndTheMasterProvesFirst) {
  const auto done = run_handshake(testing::kClusterSecret, testing::kClusterSecret);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->master.master_to_worker, done->worker.master_to_worker);
  EXPECT_EQ(done->master.worker_to_master, done->worker.worker_to_master);
  EXPECT_NE(done->master.master_to_worker, done->master.worker_to_master);
  EXPECT_EQ(done->info.name(), "worker-w");
  // Every session has keys of its own (fresh nonces).
  EXPECT_NE(run_handshake(testing::kClusterSecret, testing::kClusterSecret)->master.master_to_worker, done->master.master_to_worker);

  // The worker answers a hello with a nonce only, and a wrong proof with a refusal only.
  net::WorkerHandshake worker(testing::kClusterSecret, "w");
  net::MasterHandshake stranger(testing::kOtherSecret, "m");
  const auto challenge = worker.on_message(stranger.hello());
  ASSERT_EQ(challenge.kind, Kind::reply);
  EXPECT_EQ(challenge.message->challenge().nonce().size(), net::kNonceBytes);
  const auto proof = stranger.on_message(*challenge.message);
  const auto refused = worker.on_message(*proof.message);
  EXPECT_EQ(refused.kind, Kind::refuse);
  EXPECT_TRUE(refused.message->has_refused());
  EXPECT_FALSE(refused.message->has_welcome());
  EXPECT_FALSE(worker.done());
  EXPECT_THROW(worker.session_keys(), net::ProtocolError);
}

TEST(WireSecurity, AWorkerThatDoesNotProveTheSecretIsRefused) {
  net::MasterHandshake master(testing::kClusterSecret, "m");
  net::WorkerHandshake impostor(testing::kOtherSecret, "w");
  const auto challenge = impostor.on_message(master.hello());
  const auto proof = master.on_message(*challenge.message);
  // The impostor cannot check the master's proof; suppose it welcomes the master anyway.
  wire::Envelope welcome;
  welcome.mutable_welcome()->set_proof(std::string(32, 'x'));
  const auto step = master.on_message(welcome);
  EXPECT_EQ(step.kind, Kind::refuse);
  EXPECT_NE(step.reason.find("authentication failed"), std::string::npos);
  EXPECT_FALSE(master.done());
}

TEST(WireSecurity, HandshakeMessagesOutOfOrderAreProtocolErrors) {
  net::WorkerHandshake worker(testing::kClusterSecret, "w");
  wire::Envelope request;
  request.mutable_frame_request()->set_frame_id(1);
  EXPECT_THROW(worker.on_message(request), net::ProtocolError);
  wire::Envelope bad_nonce;
  bad_nonce.mutable_hello()->set_protocol_version(net::kProtocolVersion);
  bad_nonce.mutable_hello()->set_nonce("short");
  EXPECT_THROW(worker.on_message(bad_nonce), net::ProtocolError);
  wire::Envelope other_version;
  other_version.mutable_hello()->set_protocol_version(1);
  other_version.mutable_hello()->set_nonce(net::random_nonce());
  const auto step = worker.on_message(other_version);
  EXPECT_EQ(step.kind, Kind::refuse);
  EXPECT_EQ(step.reason, "protocol version mismatch: the master speaks version 1, this worker speaks version " +
                             std::to_string(net::kProtocolVersion));
  // A fatal error before authenticating ends the connection without its text.
  net::WorkerHandshake fresh(testing::kClusterSecret, "w");
  wire::Envelope error;
  error.mutable_error()->set_message("forged\nline");
  error.mutable_error()->set_fatal(true);
  const auto ended = fresh.on_message(error);
  EXPECT_EQ(ended.kind, Kind::peer_ended);
  EXPECT_EQ(ended.reason.find("forged"), std::string::npos);
}

std::vector<uint8_t> frame_of(const wire::Envelope& m) { return net::encode_frame(m); }

// Opens `sealed` frames in order; the messages, or nullopt at the first one that fails.
std::optional<std::vector<wire::Envelope>> open_all(net::FrameOpener& opener, const std::vector<std::vector<uint8_t>>& sealed) {
  std::vector<wire::Envelope> out;
  for (const auto& frame : sealed) {
    std::array<uint8_t, 4> header{};
    std::copy_n(frame.begin(), 4, header.begin());
    std::vector<uint8_t> payload(frame.begin() + 4, frame.end());
    try {
      opener.open(header, payload);
    } catch (const net::ProtocolError&) {
      return std::nullopt;
    }
    out.push_back(net::decode_body(payload));
  }
  return out;
}

TEST(WireSecurity, SealedFramesRejectTamperingReplayAndReordering) {
  const auto keys = net::derive_session_keys(testing::kClusterSecret, net::kProtocolVersion, std::string(32, 'm'), std::string(32, 'w'));
  net::FrameSealer sealer(keys.master_to_worker);
  std::vector<std::vector<uint8_t>> sealed;
  for (uint64_t id = 1; id <= 3; ++id) {
    wire::Envelope m;
    m.mutable_cancel_frame()->set_frame_id(id);
    auto frame = frame_of(m);
    const std::vector<uint8_t> plain = frame;
    sealer.seal(frame);
    EXPECT_EQ(frame.size(), plain.size() + net::kSealTagBytes);
    EXPECT_EQ(net::decode_frame_length(std::span<const uint8_t, 4>(frame.data(), 4)), plain.size() - 4 + net::kSealTagBytes);
    EXPECT_FALSE(std::equal(plain.begin() + 4, plain.end(), frame.begin() + 4));  // the body is not in clear
    sealed.push_back(frame);
  }
  {
    net::FrameOpener opener(keys.master_to_worker);
    const auto opened = open_all(opener, sealed);
    ASSERT_TRUE(opened);
    ASSERT_EQ(opened->size(), 3u);
    EXPECT_EQ((*opened)[2].cancel_frame().frame_id(), 3u);
  }
  const auto rejected = [&](std::vector<std::vector<uint8_t>> frames, const net::SessionKey& key) {
    net::FrameOpener opener(key);
    return !open_all(opener, frames);
  };
  EXPECT_TRUE(rejected({sealed[1], sealed[0]}, keys.master_to_worker));             // reordered
  EXPECT_TRUE(rejected({sealed[0], sealed[0]}, keys.master_to_worker));             // replayed
  EXPECT_TRUE(rejected({sealed[0], sealed[2]}, keys.master_to_worker));             // one dropped
  EXPECT_TRUE(rejected({sealed[0]}, keys.worker_to_master));                        // reflected back
  for (size_t at : {size_t(0), size_t(5), sealed[0].size() - 1}) {                  // length, body, tag
    auto tampered = sealed;
    tampered[0][at] ^= 0x01;
    EXPECT_TRUE(rejected(tampered, keys.master_to_worker)) << "byte " << at;
  }
}

TEST(WireSecurity, SecretRulesAndSessionKeys) {
  testing::TempDir dir("wire_secret");
  EXPECT_EQ(net::make_secret().size(), 2 * net::kMinSecretBytes);
  EXPECT_NE(net::make_secret(), net::make_secret());
  net::write_new_secret_file(dir / "s");
  EXPECT_EQ(net::load_secret(dir / "s").size(), 64u);
  EXPECT_THROW(net::write_new_secret_file(dir / "s"), Error);
  struct stat info {};
  ASSERT_EQ(::stat((dir / "s").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  testing::write_secret(dir / "upper", "  " + std::string(testing::kClusterSecret).substr(0, 32) + "ABCDEF0123456789ABCDEF0123456789\n\n");
  EXPECT_NO_THROW(net::load_secret(dir / "upper"));
  std::filesystem::permissions(dir / "upper", std::filesystem::perms::group_read, std::filesystem::perm_options::add);
  EXPECT_THROW(net::load_secret(dir / "upper"), Error);
  EXPECT_THROW(net::load_secret(dir / "missing"), Error);
  // Keys depend on the secret, both nonces and the version.
  const std::string m(32, 'm'), w(32, 'w');
  const auto base = net::derive_session_keys("s1", 2, m, w).master_to_worker;
  EXPECT_NE(net::derive_session_keys("s2", 2, m, w).master_to_worker, base);
  EXPECT_NE(net::derive_session_keys("s1", 3, m, w).master_to_worker, base);
  EXPECT_NE(net::derive_session_keys("s1", 2, w, m).master_to_worker, base);
  EXPECT_EQ(net::derive_session_keys("s1", 2, m, w).master_to_worker, base);
}

TEST(WireSecurity, ASecretInUpperCaseIsTheSameKeyAndAHugeSecretFileIsNotRead) {
  testing::TempDir dir("wire_secret_case");
  const std::string secret = net::make_secret();
  std::string upper = secret;
  for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  ASSERT_NE(upper, secret);
  testing::write_secret(dir / "lower", secret + "\n");
  testing::write_secret(dir / "upper", upper + "\n");
  EXPECT_EQ(net::load_secret(dir / "upper"), net::load_secret(dir / "lower"));
  // A 50 MB file is refused by its size, with the reason.
  testing::write_secret(dir / "huge", std::string(50u << 20, 'a'));
  try {
    net::load_secret(dir / "huge");
    FAIL() << "a 50 MB secret file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("52428801 bytes"), std::string::npos) << e.what();
  }
}

TEST(WireSecurity, PeerTextIsOneSafeLine) {
  EXPECT_EQ(net::printable_peer_text("plain text, Ünïcødé"), "plain text, Ünïcødé");
  EXPECT_EQ(net::printable_peer_text("a\nb\x1b[31mc"), "a\\x0ab\\x1b[31mc");
  EXPECT_EQ(net::printable_peer_text("\xff\xc3"), "\\xff\\xc3");
  EXPECT_EQ(net::printable_peer_text("\xc2\x85"), "\\xc2\\x85");  // C1 NEL
  EXPECT_EQ(net::printable_peer_text(std::string(300, 'x'), 10), std::string(10, 'x') + "...");
  EXPECT_TRUE(net::is_printable_utf8("ok"));
  EXPECT_FALSE(net::is_printable_utf8("no\tway"));
}

TEST(WireSecurity, LogBudgetLetsABurstThroughThenCountsWhatItLeavesOut) {
  net::LogBudget budget(0.001, 3);
  net::set_log_quiet(true);  // info lines are dropped by the log itself; the budget still counts
  for (int i = 0; i < 10; ++i) budget.info("line");
  net::set_log_quiet(false);
  EXPECT_EQ(budget.dropped(), 7u);
}

struct OneWorker {
  testing::TempDir dir{"wire_security"};
  std::optional<testing::WorkerProcess> worker;
  OneWorker() {
    testing::write_secret(dir / "secret", testing::kClusterSecret);
    std::filesystem::create_directories(dir / "scenes");
    worker.emplace(dir.path(), "w", dir / "scenes", dir / "secret");
  }
  bool log_has(const std::string& text) const {
    for (int i = 0; i < 100; ++i) {
      if (worker->log().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
};

TEST(WireSecurity, AuthenticatedSessionIsSealedAndAnInjectedFrameEndsIt) {
  OneWorker w;
  testing::SealedClient client(w.worker->port(), testing::kClusterSecret);
  ASSERT_TRUE(client.ready()) << w.worker->log();
  wire::Envelope stats;
  stats.mutable_stats_request();
  ASSERT_TRUE(client.send(stats));
  const auto reply = client.receive();
  ASSERT_TRUE(reply && reply->has_worker_stats()) << w.worker->log();
  // The same sealed frame again (a replay by someone on the path) ends the connection.
  auto frame = net::encode_frame(stats);
  client.seal(frame);
  ASSERT_TRUE(client.send_bytes(frame));
  const auto second = client.receive();
  ASSERT_TRUE(second && second->has_worker_stats());
  ASSERT_TRUE(client.send_bytes(frame));
  EXPECT_TRUE(client.closed_by_peer());
  EXPECT_TRUE(w.log_has("does not authenticate")) << w.worker->log();
}

TEST(WireSecurity, AMastersErrorTextIsLoggedOnlyAsOneSafeLine) {
  OneWorker w;
  testing::SealedClient client(w.worker->port(), testing::kClusterSecret);
  ASSERT_TRUE(client.ready());
  wire::Envelope e;
  e.mutable_error()->set_message("oops\n12:00:00.000 tessera-worker: FORGED\x1b[2J");
  ASSERT_TRUE(client.send(e));
  EXPECT_TRUE(w.log_has("reports: oops\\x0a12:00:00.000 tessera-worker: FORGED\\x1b[2J")) << w.worker->log();
  EXPECT_EQ(w.worker->log().find("\nFORGED"), std::string::npos);
  EXPECT_EQ(w.worker->log().find("\n12:00:00.000 tessera-worker: FORGED"), std::string::npos);
}

}  // namespace
}  // namespace tessera
