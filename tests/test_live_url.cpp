// Opening the live session from a headset: the URLs tessera-master --serve prints for a wildcard
// bind (one per LAN address, the first one on the line scripts parse), the self-signed certificate
// naming those addresses, the QR codes of the URL (terminal and /qr.svg), and the answer a plain
// http:// request to the HTTPS port gets.
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <qrencode.h>
#include <sys/stat.h>

#include <regex>
#include <set>

#include "cluster_test_support.h"
#include "master/live/lan_addresses.h"
#include "master/live/live_client.h"
#include "master/live/qr_code.h"
#include "master/live/tls_identity.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;
using namespace master::live;
using testing::Process;
using testing::TempDir;
using testing::WorkerProcess;

constexpr const char* kToken = "fedcba9876543210fedcba9876543210";

// ---- the URL list ----

InterfaceAddress address(const std::string& interface, const std::string& text, bool running = true) {
  InterfaceAddress a;
  a.interface = interface;
  a.address = text;
  a.ipv6 = text.find(':') != std::string::npos;
  a.up = true;
  a.running = running;
  a.loopback = interface == "lo";
  return a;
}

TEST(LiveUrls, WildcardBindListsLanAddressesLoopbackLast) {
  InterfaceAddress down = address("eth1", "192.168.5.5");
  down.up = false;
  const std::vector<InterfaceAddress> interfaces{
      address("lo", "127.0.0.1"),           address("lo", "::1"),
      address("docker0", "172.17.0.1"),     address("wlan0", "10.0.0.5", false),  // up, no link
      address("eth0", "192.168.1.20"),      address("eth0", "fe80::1234"),         // link-local: no URL
      address("eth0", "fd00::5"),           down,
      address("eth0:1", "192.168.1.20"),  // the same address twice
  };
  EXPECT_EQ(served_hosts("0.0.0.0", interfaces), (std::vector<std::string>{"192.168.1.20", "10.0.0.5", "172.17.0.1", "127.0.0.1"}));
  EXPECT_EQ(served_hosts("::", interfaces),
            (std::vector<std::string>{"192.168.1.20", "[fd00::5]", "10.0.0.5", "172.17.0.1", "127.0.0.1", "[::1]"}));
  EXPECT_EQ(served_hosts("[::]", interfaces), served_hosts("::", interfaces));
  EXPECT_EQ(served_hosts("0.0.0.0", {address("lo", "127.0.0.1")}), std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(served_hosts("0.0.0.0", {}), std::vector<std::string>{"127.0.0.1"});  // no interface at all
  // a specific bind address (or name) is the one URL
  EXPECT_EQ(served_hosts("192.168.1.20", interfaces), std::vector<std::string>{"192.168.1.20"});
  EXPECT_EQ(served_hosts("127.0.0.1", interfaces), std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(served_hosts("studio.local", interfaces), std::vector<std::string>{"studio.local"});
  EXPECT_EQ(served_hosts("::1", interfaces), std::vector<std::string>{"[::1]"});

  EXPECT_EQ(page_url("192.168.1.20", 8443, "abc"), "https://192.168.1.20:8443/?token=abc");
  EXPECT_EQ(page_url("[fd00::5]", 8443, "abc"), "https://[fd00::5]:8443/?token=abc");
  EXPECT_EQ(page_url("fd00::5", 8443, "abc"), "https://[fd00::5]:8443/?token=abc");
  EXPECT_TRUE(certificate_name("[fd00::5]").ip);
  EXPECT_EQ(certificate_name("[fd00::5]").value, "fd00::5");
  EXPECT_FALSE(certificate_name("studio.local").ip);
}

TEST(LiveUrls, ThisMachineHasItsLoopbackAddress) {
  const auto found = local_interface_addresses();
  EXPECT_TRUE(std::any_of(found.begin(), found.end(), [](const InterfaceAddress& a) { return a.address == "127.0.0.1" && a.loopback && a.up; }));
}

// ---- the certificate ----

struct Names {
  std::set<std::string> ip, dns;
};

// Read back with OpenSSL, independently of tls_identity.cpp.
Names certificate_names(const std::filesystem::path& pem_file) {
  const std::string pem = read_file_text(pem_file);
  BIO* bio = BIO_new_mem_buf(pem.data(), int(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  Names names;
  if (!cert) return names;
  auto* general = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; general && i < sk_GENERAL_NAME_num(general); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(general, i);
    if (n->type == GEN_DNS) {
      names.dns.insert(reinterpret_cast<const char*>(ASN1_STRING_get0_data(n->d.dNSName)));
    } else if (n->type == GEN_IPADD) {
      char text[INET6_ADDRSTRLEN] = "";
      const int length = ASN1_STRING_length(n->d.iPAddress);
      inet_ntop(length == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(n->d.iPAddress), text, sizeof text);
      names.ip.insert(text);
    }
  }
  GENERAL_NAMES_free(general);
  X509_free(cert);
  return names;
}

TEST(LiveUrls, SelfSignedCertificateNamesTheServedAddressesAndFollowsThem) {
  TempDir dir("live_cert");
  testing::ScopedEnv config("XDG_CONFIG_HOME", dir.path().string());
  const auto cert_file = dir / "tessera/live-cert.pem";

  const TlsIdentity first = load_tls_identity(std::nullopt, std::nullopt, {"192.168.1.20", "[fd00::5]", "127.0.0.1"});
  EXPECT_TRUE(first.created);
  EXPECT_FALSE(first.replaced);
  EXPECT_EQ(first.certificate_path, cert_file);
  Names names = certificate_names(cert_file);
  EXPECT_EQ(names.ip, (std::set<std::string>{"127.0.0.1", "192.168.1.20", "fd00::5"}));
  EXPECT_TRUE(names.dns.count("localhost"));
  EXPECT_EQ(std::filesystem::status(dir / "tessera/live-key.pem").permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);

  // the same addresses, or fewer: the certificate a browser accepted stays
  for (const std::vector<std::string>& hosts : {std::vector<std::string>{"192.168.1.20", "127.0.0.1"}, std::vector<std::string>{}}) {
    const TlsIdentity again = load_tls_identity(std::nullopt, std::nullopt, hosts);
    EXPECT_FALSE(again.created);
    EXPECT_EQ(again.fingerprint, first.fingerprint);
  }

  // another network: a new certificate for the addresses now served
  const TlsIdentity moved = load_tls_identity(std::nullopt, std::nullopt, {"10.1.2.3", "127.0.0.1"});
  EXPECT_TRUE(moved.created);
  EXPECT_TRUE(moved.replaced);
  EXPECT_NE(moved.fingerprint, first.fingerprint);
  names = certificate_names(cert_file);
  EXPECT_EQ(names.ip, (std::set<std::string>{"127.0.0.1", "10.1.2.3"}));
  EXPECT_EQ(moved.fingerprint, certificate_fingerprint(read_file_text(cert_file)));

  // the user's own certificate is used as it is; the addresses it does not name are reported
  const auto own = dir / "own-cert.pem", own_key = dir / "own-key.pem";
  std::filesystem::copy_file(cert_file, own);
  std::filesystem::copy_file(dir / "tessera/live-key.pem", own_key);
  const TlsIdentity user = load_tls_identity(own, own_key, {"10.1.2.3", "192.168.7.7", "[::1]"});
  EXPECT_FALSE(user.created);
  EXPECT_EQ(user.unnamed, (std::vector<std::string>{"192.168.7.7", "::1"}));
}

// ---- QR codes ----

// libqrencode's modules for `text`, as the live session asks for them.
std::vector<std::vector<bool>> reference_modules(const std::string& text) {
  QRcode* code = QRcode_encodeString(text.c_str(), 0, QR_ECLEVEL_M, QR_MODE_8, 1);
  EXPECT_TRUE(code);
  std::vector<std::vector<bool>> rows;
  if (!code) return rows;
  rows.assign(size_t(code->width), std::vector<bool>(size_t(code->width)));
  for (int y = 0; y < code->width; ++y)
    for (int x = 0; x < code->width; ++x) rows[y][x] = code->data[y * code->width + x] & 1;
  QRcode_free(code);
  return rows;
}

// The dark modules an SVG from qr_svg() draws (its path of one-module-high runs), quiet zone
// removed; empty when it is not such an SVG of a whole number of modules.
std::vector<std::vector<bool>> svg_modules(const std::string& svg) {
  std::smatch m;
  if (!std::regex_search(svg, m, std::regex(R"re(^<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 (\d+) (\d+)")re")) || m[1] != m[2])
    return {};
  const int side = std::stoi(m[1]), width = side - 2 * kQrQuietZone;
  if (width <= 0 || svg.find("</svg>") == std::string::npos || !std::regex_search(svg, m, std::regex(R"re(<path fill="#000" d="([^"]*)")re")))
    return {};
  std::vector<std::vector<bool>> rows(static_cast<size_t>(width), std::vector<bool>(static_cast<size_t>(width)));
  const std::string path = m[1];
  const std::regex run(R"(M(\d+) (\d+)h(\d+)v1h-(\d+)z)");
  size_t covered = 0;
  for (auto it = std::sregex_iterator(path.begin(), path.end(), run); it != std::sregex_iterator(); ++it) {
    const int x = std::stoi((*it)[1]) - kQrQuietZone, y = std::stoi((*it)[2]) - kQrQuietZone, n = std::stoi((*it)[3]);
    if ((*it)[3] != (*it)[4] || x < 0 || y < 0 || y >= width || x + n > width) return {};
    for (int k = 0; k < n; ++k) rows[y][x + k] = true;
    covered += it->length();
  }
  if (covered != path.size()) return {};
  return rows;
}

TEST(LiveUrls, QrCodesDrawLibqrencodesModules) {
  const std::string url = page_url("192.168.100.200", 65535, kToken);
  const auto reference = reference_modules(url);
  const QrCode code(url);
  ASSERT_EQ(size_t(code.width()), reference.size());
  EXPECT_GE(code.width(), 21);
  EXPECT_EQ(svg_modules(qr_svg(code)), reference);

  // terminal: two module rows a line of half blocks between a colour and a reset, quiet zone around
  const std::string text = qr_terminal_text(code);
  const int side = code.width() + 2 * kQrQuietZone;
  std::vector<std::vector<bool>> drawn(static_cast<size_t>(side + 1), std::vector<bool>(static_cast<size_t>(side)));
  std::istringstream lines(text);
  int row = 0;
  for (std::string line; std::getline(lines, line); row += 2) {
    const std::string start = "\033[30;107m", end = "\033[0m";
    ASSERT_EQ(line.rfind(start, 0), 0u) << row;
    ASSERT_GE(line.size(), start.size() + end.size());
    ASSERT_EQ(line.substr(line.size() - end.size()), end);
    const std::string body = line.substr(start.size(), line.size() - start.size() - end.size());
    int x = 0;
    for (size_t i = 0; i < body.size(); ++x) {
      ASSERT_LT(x, side);
      if (body[i] == ' ') {
        ++i;
        continue;
      }
      const std::string glyph = body.substr(i, 3);
      ASSERT_TRUE(glyph == "\u2588" || glyph == "\u2580" || glyph == "\u2584") << row << "," << x;
      drawn[row][x] = glyph != "\u2584";
      drawn[row + 1][x] = glyph != "\u2580";
      i += 3;
    }
    EXPECT_EQ(x, side);
  }
  EXPECT_EQ(row, (side + 1) / 2 * 2);
  for (int y = 0; y < side; ++y)
    for (int x = 0; x < side; ++x) {
      const int mx = x - kQrQuietZone, my = y - kQrQuietZone;
      const bool expected = mx >= 0 && my >= 0 && mx < code.width() && my < code.width() && reference[my][mx];
      ASSERT_EQ(drawn[y][x], expected) << x << "," << y;
    }
}

// ---- a master serving every address ----

// What one plain-TCP request gets back, the whole reply until the server closes.
std::string plain_request(uint16_t port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string reply;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0 && ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) > 0) {
    char buffer[4096];
    for (ssize_t got; (got = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) reply.append(buffer, size_t(got));
  }
  ::close(fd);
  return reply;
}

TEST(LiveUrls, WildcardServePrintsEveryAddressAndServesTheQrCode) {
  TempDir dir("live_url");
  const auto secret = dir / "secret", scenes = dir / "scenes";
  testing::write_secret(secret, testing::kClusterSecret);
  std::filesystem::create_directories(scenes);
  WorkerProcess worker(dir.path(), "w", scenes, secret);
  ASSERT_FALSE(worker.address().empty()) << worker.log();
  // stdout alone in its file, as a script reading it sees it
  const auto out = dir / "master.out", err = dir / "master.err";
  testing::ScopedEnv config("XDG_CONFIG_HOME", dir.path().string());  // the self-signed identity lands here
  Process master({"/bin/sh", "-c", "exec \"$@\" 2>\"$0\"", err.string(),
                  testing::master_binary().string(), "--workers", worker.address(), "--scene", testing::cornell_tpk().string(),
                  "--secret-file", secret.string(), "--no-status", "--size", "64x48", "--serve", "0.0.0.0:0", "--token", kToken},
                 out);
  std::string stdout_text;
  for (int i = 0; i < 1500 && stdout_text.find("\ncertificate ") == std::string::npos; ++i) {
    stdout_text = master.log();
    if (master.wait(10ms)) break;
  }
  const auto stderr_text = [&] { return read_file_text(err); };
  ASSERT_NE(stdout_text.find("\ncertificate "), std::string::npos) << stdout_text << stderr_text();

  // the first line, parsed as tests/browser/live_cluster.py and deploy/live-bench parse it
  const auto hosts = served_hosts("0.0.0.0", local_interface_addresses());
  std::istringstream lines(stdout_text);
  std::string first;
  std::getline(lines, first);
  std::smatch m;
  ASSERT_TRUE(std::regex_match(first, m, std::regex(R"(serving (https://(\S+):(\d+)/\?token=([0-9a-f]+)))"))) << first;
  EXPECT_EQ(m[2], hosts.front());
  EXPECT_NE(m[2], "0.0.0.0");
  EXPECT_EQ(m[4], kToken);
  const uint16_t port = uint16_t(std::stoi(m[3]));
  const std::string url = m[1];
  for (size_t i = 1; i < hosts.size(); ++i) {
    std::string line;
    std::getline(lines, line);
    EXPECT_EQ(line, "also " + page_url(hosts[i], port, kToken));
  }
  std::string certificate_line;
  std::getline(lines, certificate_line);
  EXPECT_EQ(certificate_line.rfind("certificate ", 0), 0u) << certificate_line;
  EXPECT_EQ(stdout_text.find("\u2580"), std::string::npos) << "a QR code on a stdout that is no terminal";

  // the certificate names every address served
  const Names names = certificate_names(dir / "tessera/live-cert.pem");
  for (const auto& host : hosts) {
    const CertificateName name = certificate_name(host);
    EXPECT_TRUE(name.ip ? names.ip.count(name.value) : names.dns.count(name.value)) << host;
  }

  // /qr.svg: the token's, the first URL's code
  EXPECT_EQ(https_get("127.0.0.1", port, "/qr.svg", 10s).status, 403);
  EXPECT_EQ(https_get("127.0.0.1", port, "/qr.svg?token=0123456789abcdef0123456789abcdef", 10s).status, 403);
  const HttpReply svg = https_get("127.0.0.1", port, std::string("/qr.svg?token=") + kToken, 10s);
  EXPECT_EQ(svg.status, 200);
  EXPECT_EQ(svg.content_type, "image/svg+xml");
  EXPECT_EQ(svg_modules(svg.body), reference_modules(url));

  // http:// to the HTTPS port: a 400 that says where to go, without the token
  const std::string reply = plain_request(port, "GET /?token=" + std::string(kToken) + " HTTP/1.1\r\nHost: 127.0.0.1:" +
                                                    std::to_string(port) + "\r\nUser-Agent: test\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << reply;
  const std::string origin = "https://127.0.0.1:" + std::to_string(port);
  EXPECT_NE(reply.find("\r\nLocation: " + origin + "/\r\n"), std::string::npos) << reply;
  EXPECT_NE(reply.find("\r\n\r\nThis is an HTTPS port: open " + origin + "/?token=..."), std::string::npos) << reply;
  EXPECT_EQ(reply.find(kToken), std::string::npos) << reply;
  // without a Host header the served URL's host stands in; bytes that are no HTTP just end
  const std::string bare = plain_request(port, "GET / HTTP/1.0\r\n\r\n");
  EXPECT_NE(bare.find("open https://" + hosts.front() + ":" + std::to_string(port) + "/"), std::string::npos) << bare;
  EXPECT_EQ(plain_request(port, std::string("\x01\x02garbage\r\n\r\n")), "");
  // and HTTPS goes on
  EXPECT_EQ(https_get("127.0.0.1", port, std::string("/?token=") + kToken, 10s).status, 200);
}

TEST(LiveUrls, NoQrBelongsToServe) {
  const auto r = testing::run_command_split(testing::master_binary().string() +
                                            " --workers 127.0.0.1:1 --scene x.tpk --secret-file /nonexistent --no-qr");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--no-qr belong to --serve"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tessera
