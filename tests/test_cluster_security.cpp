// The cluster against hostile peers, with real tessera-worker and tessera-master processes:
// unauthenticated sockets must not lock a master out, peers must not flood or forge the
// worker's log, the secret must be strong and private and never testable offline by a peer
// that connects without it, and after the handshake nothing in clear is accepted.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <thread>

#include "cluster_test_support.h"
#include "common/net/auth.h"
#include "common/net/framing.h"
#include "common/net/protocol.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;
using testing::RawClient;
using testing::TempDir;
using testing::WorkerProcess;

struct SecuredWorker {
  TempDir dir{"cluster_security"};
  std::filesystem::path secret = dir / "secret";
  std::optional<WorkerProcess> worker;
  explicit SecuredWorker(std::vector<std::string> extra = {"--device", "host", "--threads", "1"}) {
    testing::write_secret(secret, testing::kClusterSecret);
    std::filesystem::create_directories(dir / "scenes");
    std::filesystem::copy_file(testing::cornell_tpk(), dir / "scenes" / "cornell.tpk");
    worker.emplace(dir.path(), "w", dir / "scenes", secret, extra);
  }
  uint16_t port() const { return worker->port(); }
  std::string log() const { return worker->log(); }
  std::string master(const std::string& extra = "") const {
    return "timeout 60 " + testing::master_binary().string() + " --workers " + worker->address() + " --scene " +
           testing::cornell_tpk().string() + " --secret-file " + secret.string() +
           " --no-status --size 32x32 --tile 16 --poses camera " + extra;
  }
};

wire::Envelope hello(const std::string& nonce) {
  wire::Envelope m;
  m.mutable_hello()->set_protocol_version(net::kProtocolVersion);
  m.mutable_hello()->set_nonce(nonce);
  return m;
}

// Hello and the master's proof; returns the worker's answer to the proof (Welcome or Refused).
std::optional<wire::Envelope> prove(RawClient& client, const std::string& secret) {
  const std::string nonce = net::random_nonce();
  client.send(hello(nonce));
  const auto challenge = client.receive();
  if (!challenge || !challenge->has_challenge()) return challenge;
  wire::Envelope proof;
  proof.mutable_proof()->set_proof(net::make_proof(secret, net::Role::master, net::kProtocolVersion, nonce, challenge->challenge().nonce()));
  client.send(proof);
  return client.receive();
}

TEST(ClusterSecurity, IdleUnauthenticatedSocketsDoNotLockTheMasterOut) {
  SecuredWorker w;
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 40; ++i) {
    idle.push_back(std::make_unique<RawClient>(w.port()));
    ASSERT_TRUE(idle.back()->connected());
    if (i % 2) idle.back()->send(hello(net::random_nonce()));  // half of them stall after the hello
  }
  std::this_thread::sleep_for(200ms);
  const auto r = testing::run_command(w.master("--reconnect-interval 0"));
  EXPECT_EQ(r.exit_code, 0) << r.output << w.log();
  EXPECT_NE(r.output.find("1 frames of 32x32"), std::string::npos) << r.output;
}

TEST(ClusterSecurity, HandshakesHaveAPerAddressBudgetAndAShortDeadline) {
  SecuredWorker w;
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 40; ++i) {
    idle.push_back(std::make_unique<RawClient>(w.port(), "127.0.0.2"));
    ASSERT_TRUE(idle.back()->connected());
  }
  RawClient master(w.port(), "127.0.0.3");
  ASSERT_TRUE(master.connected());
  const auto welcome = prove(master, testing::kClusterSecret);
  ASSERT_TRUE(welcome && welcome->has_welcome()) << w.log();
  // Of one address's 40 idle sockets only a few are kept, and those only for a few seconds.
  size_t closed_at_once = 0;
  for (auto& c : idle) closed_at_once += c->closed_by_peer(10ms);
  EXPECT_GE(closed_at_once, 30u);
  EXPECT_TRUE(idle.back()->closed_by_peer(6s));
}

TEST(ClusterSecurity, MasterRetriesABusyWorkerWithinTheStartupTimeout) {
  SecuredWorker w({"--device", "host", "--threads", "1", "--max-connections", "1"});
  auto holder = std::make_unique<RawClient>(w.port());
  ASSERT_TRUE(prove(*holder, testing::kClusterSecret)->has_welcome());
  std::thread release([&] {
    std::this_thread::sleep_for(1500ms);
    holder.reset();
  });
  const auto r = testing::run_command(w.master("--reconnect-interval 0 --startup-timeout 20"));
  release.join();
  EXPECT_EQ(r.exit_code, 0) << r.output << w.log();
  EXPECT_NE(r.output.find("1 frames of 32x32"), std::string::npos) << r.output;
}

TEST(ClusterSecurity, UnauthenticatedPeersCannotFloodOrForgeTheLog) {
  SecuredWorker w;
  const std::string forged = "\n12:00:00.000 tessera-worker: 127.0.0.1:1: master authenticated FORGED";
  {
    RawClient client(w.port());  // many non-fatal errors with long texts
    wire::Envelope e;
    e.mutable_error()->set_message(forged + std::string(8000, 'x'));
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(client.send(e));
  }
  for (int i = 0; i < 100; ++i) {  // many connections, each ending with a fatal error
    RawClient client(w.port());
    wire::Envelope e;
    e.mutable_error()->set_message(forged);
    e.mutable_error()->set_fatal(true);
    client.send(e);
    client.closed_by_peer(1s);
  }
  for (int i = 0; i < 400; ++i) {  // hellos whose strings are not UTF-8 (the protobuf library reports those)
    RawClient client(w.port());
    wire::Envelope m = hello(net::random_nonce());
    m.mutable_hello()->set_client_name("\xff\xfe\n12:00:00.000 tessera-worker: FORGED " + std::string(100, 'y'));
    client.send(m);
    client.closed_by_peer(1s);
  }
  RawClient later(w.port());
  EXPECT_TRUE(prove(later, testing::kClusterSecret)->has_welcome()) << w.log().substr(0, 2000);
  std::this_thread::sleep_for(200ms);
  const std::string log = w.log();
  EXPECT_LT(log.size(), 64u * 1024) << log.substr(0, 2000);
  EXPECT_EQ(log.find("FORGED"), std::string::npos) << log.substr(0, 2000);
}

TEST(ClusterSecurity, SecretsMustBeLongRandomHexAndPrivate) {
  TempDir dir("cluster_secret_rules");
  std::filesystem::create_directories(dir / "scenes");
  const std::string worker = testing::worker_binary().string() + " --scenes " + (dir / "scenes").string() + " --listen 127.0.0.1:0 --secret-file ";
  const auto refused = [&](const std::string& name, const std::string& text, const std::string& needle) {
    testing::write_secret(dir / name, text);
    const auto r = testing::run_command("timeout 10 " + worker + (dir / name).string());
    EXPECT_EQ(r.exit_code, 1) << name << ": " << r.output;
    EXPECT_EQ(r.output.rfind("tessera-worker: error: ", 0), 0u) << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << r.output;
  };
  refused("short", "aaaaaaaaaaaaaaaa", "at least 64");
  refused("words", "a-test-secret-of-some-length-that-is-long-enough-but-not-hex-at-all", "not hex");
  refused("repeated", std::string(64, 'a'), "not random");
  std::string pattern;
  for (int i = 0; i < 4; ++i) pattern += "0123456789abcdef";
  refused("pattern", pattern, "repeats every 16 digits");
  testing::write_secret(dir / "open", testing::kClusterSecret);
  std::filesystem::permissions(dir / "open", std::filesystem::perms::others_read, std::filesystem::perm_options::add);
  const auto open = testing::run_command("timeout 10 " + worker + (dir / "open").string());
  EXPECT_EQ(open.exit_code, 1) << open.output;
  EXPECT_NE(open.output.find("mode 604"), std::string::npos) << open.output;
  EXPECT_NE(open.output.find("chmod 600"), std::string::npos) << open.output;

  // --make-secret writes a fresh secret the programs accept, and never replaces a file.
  const auto made = testing::run_command(testing::worker_binary().string() + " --make-secret " + (dir / "made").string());
  ASSERT_EQ(made.exit_code, 0) << made.output;
  struct stat info {};
  ASSERT_EQ(::stat((dir / "made").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  const std::string text = read_file_text(dir / "made");
  EXPECT_EQ(text.size(), 65u);
  EXPECT_EQ(text.find_first_not_of("0123456789abcdef\n"), std::string::npos) << text;
  const auto again = testing::run_command(testing::worker_binary().string() + " --make-secret " + (dir / "made").string());
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_EQ(read_file_text(dir / "made"), text);
  testing::WorkerProcess started(dir.path(), "made", dir / "scenes", dir / "made");
  EXPECT_FALSE(started.address().empty()) << started.log();
}

TEST(ClusterSecurity, APeerWithoutTheSecretLearnsNothingToTestGuessesOn) {
  SecuredWorker w;
  RawClient client(w.port());
  const std::string nonce = net::random_nonce();
  client.send(hello(nonce));
  const auto challenge = client.receive();
  ASSERT_TRUE(challenge && challenge->has_challenge());
  // Version 1 sent HMAC(secret, nonces) here, before the peer had proved anything.
  const std::string worker_nonce = challenge->challenge().nonce();
  const std::string bytes = challenge->SerializeAsString();
  for (uint32_t version : {1u, net::kProtocolVersion})
    EXPECT_EQ(bytes.find(net::make_proof(testing::kClusterSecret, net::Role::worker, version, nonce, worker_nonce)), std::string::npos);
  EXPECT_LE(bytes.size(), worker_nonce.size() + 16) << "the challenge carries more than a nonce";
  wire::Envelope proof;
  proof.mutable_proof()->set_proof(std::string(32, 'g'));
  client.send(proof);
  const auto answer = client.receive();
  ASSERT_TRUE(answer && answer->has_refused());
  EXPECT_EQ(answer->refused().reason(), "authentication failed: wrong shared secret");
  EXPECT_LE(answer->ByteSizeLong(), 64u);
}

TEST(ClusterSecurity, NothingInClearIsAcceptedAfterTheHandshake) {
  SecuredWorker w;
  RawClient client(w.port());
  ASSERT_TRUE(prove(client, testing::kClusterSecret)->has_welcome());
  wire::Envelope stats;
  stats.mutable_stats_request();
  ASSERT_TRUE(client.send(stats));  // a frame in clear, as anyone on the path could inject it
  const auto reply = client.receive(2s);
  EXPECT_FALSE(reply && reply->has_worker_stats());
  EXPECT_TRUE(client.closed_by_peer());
}

}  // namespace
}  // namespace tessera
