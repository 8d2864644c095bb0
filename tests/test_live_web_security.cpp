// The live page's web surface as a service on a network: the token is exchanged for a session
// cookie, responses carry a Content-Security-Policy and Referrer-Policy, and connections are capped
// per address with a deadline for their first request (sockets that never ask cannot take pages'
// places).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "master/live/access_token.h"
#include "master/live/connection_limits.h"
#include "master/live/http_server.h"
#include "master/live/live_client.h"
#include "master/live/tls_identity.h"
#include "test_helpers.h"

namespace tessera::master::live {
namespace {

using namespace std::chrono_literals;

constexpr const char* kToken = "0123456789abcdef0123456789abcdef";

struct NoPages final : ConnectionHandler {
  void opened(uint64_t, const std::string&) override {}
  void text(uint64_t, const std::string&) override {}
  void closed(uint64_t, const std::string&) override {}
};

struct Server {
  explicit Server(ServerOptions options = {}) {
    testing::ScopedEnv config("XDG_CONFIG_HOME", (dir / "config").string());
    options.token = kToken;
    options.tls = load_tls_identity(std::nullopt, std::nullopt);
    server.emplace(std::move(options), handler);
    server->start();
  }
  uint16_t port() const { return server->port(); }
  testing::TempDir dir{"live_web"};
  NoPages handler;
  std::optional<HttpServer> server;
};

// A TCP connection that says nothing.
struct SilentSocket {
  explicit SilentSocket(uint16_t port) : fd(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~SilentSocket() { ::close(fd); }
  // True once the server has closed it (end of stream or reset) within `timeout`.
  bool closed_within(std::chrono::milliseconds timeout) const {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, int(timeout.count())) <= 0) return false;
    char byte;
    return ::recv(fd, &byte, 1, MSG_DONTWAIT) <= 0;
  }
  int fd;
  bool connected = false;
};

TEST(LiveWeb, ConnectionLimitsTakeAWaitingPlaceNeverAPagesOne) {
  ConnectionLimits limits({.total = 4, .per_address = 3, .waiting_per_address = 2});
  EXPECT_TRUE(limits.admit(1, "a").admitted);
  limits.first_request(1);  // a page
  EXPECT_TRUE(limits.admit(2, "a").admitted);
  EXPECT_TRUE(limits.admit(3, "a").admitted);  // two waiting now
  // The address's third waiting one takes the oldest waiting place; the page keeps its own.
  const auto fourth = limits.admit(4, "a");
  EXPECT_TRUE(fourth.admitted);
  EXPECT_EQ(fourth.evict, std::optional<uint64_t>(2));
  limits.first_request(3);
  limits.first_request(4);  // three pages of "a": its cap, and none waiting to give way
  EXPECT_FALSE(limits.admit(5, "a").admitted);
  EXPECT_TRUE(limits.admit(6, "b").admitted);  // four in all
  const auto seventh = limits.admit(7, "c");   // over the total: the busiest address's oldest waiting one goes
  EXPECT_TRUE(seventh.admitted);
  EXPECT_EQ(seventh.evict, std::optional<uint64_t>(6));
  limits.closed(7);
  limits.closed(1);
  EXPECT_EQ(limits.open(), 2u);
}

TEST(LiveWeb, TheTokenIsExchangedForASessionCookieAndResponsesLockThePageDown) {
  Server s;
  const HttpReply page = https_get("127.0.0.1", s.port(), std::string("/?token=") + kToken, 10s);
  ASSERT_EQ(page.status, 200);
  const std::string name = session_cookie_name(s.port());
  ASSERT_TRUE(page.set_cookie.starts_with(name + "=")) << page.set_cookie;
  for (const char* attribute : {"; HttpOnly", "; Secure", "; SameSite=Strict", "; Path=/"})
    EXPECT_NE(page.set_cookie.find(attribute), std::string::npos) << attribute << " in " << page.set_cookie;
  const std::string value = *cookie_value(page.set_cookie.substr(0, page.set_cookie.find(';')), name);
  EXPECT_EQ(value, session_cookie_value(kToken));  // the same for a master restarted with this token
  EXPECT_EQ(value.find(kToken), std::string::npos);
  EXPECT_NE(session_cookie_value("another token"), value);
  const std::string cookie = "other=1; " + name + "=" + value;
  for (const char* directive : {"script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "default-src 'none'"})
    EXPECT_NE(page.content_security_policy.find(directive), std::string::npos) << directive;
  EXPECT_EQ(page.content_security_policy.find("unsafe-inline"), std::string::npos);
  EXPECT_EQ(page.referrer_policy, "no-referrer");

  // Reloads and the QR code come by the cookie, and set no new one.
  const HttpReply reload = https_get("127.0.0.1", s.port(), "/", 10s, cookie);
  EXPECT_EQ(reload.status, 200);
  EXPECT_EQ(reload.set_cookie, "");
  EXPECT_EQ(https_get("127.0.0.1", s.port(), "/qr.svg?token=", 10s, cookie).status, 200);
  // A wrong cookie is no cookie; a wrong token is refused whatever cookie comes with it.
  EXPECT_EQ(https_get("127.0.0.1", s.port(), "/", 10s, name + "=" + std::string(32, '0')).status, 403);
  EXPECT_EQ(https_get("127.0.0.1", s.port(), "/", 10s).status, 403);
  EXPECT_EQ(https_get("127.0.0.1", s.port(), "/?token=0123456789abcdef0123456789abcdee", 10s, cookie).status, 403);
  // Refusals and the page's files carry the policy too.
  EXPECT_EQ(https_get("127.0.0.1", s.port(), "/", 10s).referrer_policy, "no-referrer");
  EXPECT_NE(https_get("127.0.0.1", s.port(), "/app.js", 10s).content_security_policy, "");
}

TEST(LiveWeb, SilentConnectionsGoAtTheFirstRequestDeadlineAndGiveWayToNewOnes) {
  ServerOptions options;
  options.first_request_timeout = 400ms;
  options.caps.waiting_per_address = 2;
  Server s(options);
  {
    SilentSocket silent(s.port());
    ASSERT_TRUE(silent.connected);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(silent.closed_within(5s));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  }
  options.first_request_timeout = 60s;  // long enough that only the caps close anything
  options.caps.waiting_per_address = 2;
  Server patient(options);
  SilentSocket first(patient.port()), second(patient.port());
  ASSERT_TRUE(first.connected && second.connected);
  std::this_thread::sleep_for(100ms);  // both admitted, in order
  EXPECT_FALSE(first.closed_within(200ms));
  SilentSocket third(patient.port());
  EXPECT_TRUE(first.closed_within(2s));  // the oldest waiting one gave way
  EXPECT_FALSE(second.closed_within(200ms));
  // With both waiting places taken by silent sockets, a page is still served.
  EXPECT_EQ(https_get("127.0.0.1", patient.port(), std::string("/?token=") + kToken, 10s).status, 200);
}

}  // namespace
}  // namespace tessera::master::live
