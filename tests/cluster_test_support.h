#pragma once
// Helpers for the cluster tests: worker daemons started as real processes on free loopback
// ports, a scene packed once, reference renders from tessera-render, and a raw protocol client
// (plain POSIX sockets with timeouts) for talking to a worker the way a broken or hostile peer would.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/base/file_io.h"
#include "common/image/png_io.h"
#include "common/net/auth.h"
#include "common/net/frame_cipher.h"
#include "common/net/framing.h"
#include "common/net/handshake.h"
#include "common/net/protocol.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"
#include "wire.pb.h"

extern char** environ;

namespace tessera::testing {

inline std::filesystem::path worker_binary() { return binary_dir() / "worker" / "tessera-worker"; }
inline std::filesystem::path master_binary() { return binary_dir() / "master" / "tessera-master"; }
inline std::filesystem::path render_binary() { return binary_dir() / "worker" / "tessera-render"; }

inline constexpr const char* kCornellPose = "278,273,-800,0,0,1,0";

// The Cornell box packed once per test run (small and quick to render).
inline std::filesystem::path cornell_tpk() {
  struct RemovedAtExit {
    std::filesystem::path path;
    ~RemovedAtExit() {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  };
  static const RemovedAtExit packed{[] {
    const auto p = std::filesystem::temp_directory_path() / ("tessera_cluster_cornell_" + std::to_string(::getpid()) + ".tpk");
    pack::PackOptions o;
    o.input = scene_path("cornell_box/cornell_box.obj");
    o.settings = source_dir() / "scene-packer/scenes/cornell_box.scene.txtpb";
    o.output = p;
    o.show_progress = false;
    o.zstd_level = 3;
    pack::pack_scene(o);
    return p;
  }()};
  return packed.path;
}

// Secrets as the programs require them: 32+ random bytes as hex, in a file only its owner may read.
inline constexpr const char* kClusterSecret = "5b0e9c2f7a41d8e3b6c1a9f04d7e2b58c3a6f1e9d0b47a25e8c1f6b3d9a0e472";
inline constexpr const char* kOtherSecret = "c81f4a9e2d7b053f6ae19c48b2d5f70e3a96c1d84f2be7a0569d3c1e8b47f2a6";
inline void write_secret(const std::filesystem::path& path, const std::string& secret) {
  write_text(path, secret + "\n");
  std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

// A child process with its output in a log file; killed (SIGKILL) when the object goes away.
class Process {
 public:
  Process(const std::vector<std::string>& args, const std::filesystem::path& log) : log_(log) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Process() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  void signal(int sig) const { ::kill(pid_, sig); }
  // Exit code, or -signal; nullopt if still running after `timeout`.
  std::optional<int> wait(std::chrono::milliseconds timeout) {
    if (exited_) return status_;
    const auto end = std::chrono::steady_clock::now() + timeout;
    do {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
        return status_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } while (std::chrono::steady_clock::now() < end);
    return std::nullopt;
  }
  std::string log() const {
    try {
      return read_file_text(log_);
    } catch (...) {
      return {};
    }
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = 0;
  std::filesystem::path log_;
};

// A tessera-worker on a free loopback port.
class WorkerProcess {
 public:
  WorkerProcess(const std::filesystem::path& dir, const std::string& name, const std::filesystem::path& scenes,
                const std::filesystem::path& secret_file, std::vector<std::string> extra = {"--device", "host", "--threads", "1"}) {
    const auto port_file = dir / (name + ".port");
    std::vector<std::string> args{worker_binary().string(), "--listen", "127.0.0.1:0", "--port-file", port_file.string(), "--scenes",
                                  scenes.string(), "--secret-file", secret_file.string(), "--name", name};
    args.insert(args.end(), extra.begin(), extra.end());
    process_.emplace(args, dir / (name + ".log"));
    for (int i = 0; i < 500 && address_.empty(); ++i) {
      std::error_code ec;
      if (std::filesystem::exists(port_file, ec)) {
        address_ = read_file_text(port_file);
        while (!address_.empty() && address_.back() == '\n') address_.pop_back();
      } else {
        if (process_->wait(std::chrono::milliseconds(10))) break;
      }
    }
  }
  const std::string& address() const { return address_; }
  uint16_t port() const { return uint16_t(std::stoi(address_.substr(address_.rfind(':') + 1))); }
  Process& process() { return *process_; }
  std::string log() const { return process_->log(); }

 private:
  std::optional<Process> process_;
  std::string address_;
};

inline ImageRgba8 reference_render(const std::filesystem::path& scene, const std::string& pose, const std::string& size,
                                   const std::filesystem::path& out, const std::string& device = "host") {
  const auto r = run_command(render_binary().string() + " " + scene.string() + " --pose " + pose + " --size " + size +
                             " --device " + device + " -o " + out.string());
  if (r.exit_code != 0) throw std::runtime_error("tessera-render failed: " + r.output);
  return read_image(out);
}

// Raw protocol client with timeouts, for handshakes and malformed input.
class RawClient {
 public:
  // `source`: the loopback address to connect from (127.0.0.2, ...: another peer address).
  explicit RawClient(uint16_t port, const char* source = nullptr) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);  // not inherited by the programs a test starts
    if (source) {
      sockaddr_in from{};
      from.sin_family = AF_INET;
      ::inet_pton(AF_INET, source, &from.sin_addr);
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
        ::close(fd_);
        fd_ = -1;
        return;
      }
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return fd_ >= 0; }
  bool send_bytes(const std::vector<uint8_t>& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == ssize_t(bytes.size());
  }
  bool send(const wire::Envelope& m) { return send_bytes(net::encode_frame(m)); }
  // The next message other than a heartbeat; nullopt on EOF, error or timeout (see closed()).
  std::optional<wire::Envelope> receive(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    for (;;) {
      uint8_t header[4];
      if (!read_exact(header, 4, timeout)) return std::nullopt;
      const uint32_t length = uint32_t(header[0]) | uint32_t(header[1]) << 8 | uint32_t(header[2]) << 16 | uint32_t(header[3]) << 24;
      std::vector<uint8_t> body(length);
      if (!read_exact(body.data(), length, timeout)) return std::nullopt;
      wire::Envelope m;
      if (!m.ParseFromArray(body.data(), int(body.size()))) return std::nullopt;
      if (m.body_case() != wire::Envelope::kHeartbeat) return m;
    }
  }
  // The next frame as it arrived: its length prefix and the bytes that followed it.
  bool receive_frame(std::array<uint8_t, 4>& header, std::vector<uint8_t>& payload,
                     std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    if (!read_exact(header.data(), 4, timeout)) return false;
    payload.resize(uint32_t(header[0]) | uint32_t(header[1]) << 8 | uint32_t(header[2]) << 16 | uint32_t(header[3]) << 24);
    return read_exact(payload.data(), payload.size(), timeout);
  }
  // True once the peer has closed the connection (EOF) within `timeout`, skipping what it sends.
  bool closed_by_peer(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    uint8_t buffer[4096];
    while (std::chrono::steady_clock::now() < end) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t got = ::recv(fd_, buffer, sizeof buffer, 0);
      if (got <= 0) return true;
    }
    return false;
  }

 private:
  bool read_exact(uint8_t* out, size_t n, std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    size_t got = 0;
    while (got < n) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, int(left)) <= 0) return false;
      const ssize_t r = ::recv(fd_, out + got, n - got, 0);
      if (r <= 0) return false;
      got += size_t(r);
    }
    return true;
  }
  int fd_ = -1;
};

// A raw client that completes the handshake as a master would and then speaks sealed frames,
// for talking to a worker after authentication (malformed, oversized, replayed input).
class SealedClient {
 public:
  SealedClient(uint16_t port, const std::string& secret) : raw_(port), handshake_(secret, "test") {
    raw_.send(handshake_.hello());
    while (!handshake_.done()) {
      auto m = raw_.receive();
      if (!m) return;
      const auto step = handshake_.on_message(*m);
      if (step.kind == net::HandshakeStep::Kind::reply) raw_.send(*step.message);
      if (step.kind == net::HandshakeStep::Kind::refuse || step.kind == net::HandshakeStep::Kind::peer_ended) {
        last_ = std::move(m);
        return;
      }
    }
    const auto keys = handshake_.session_keys();
    sealer_.emplace(keys.master_to_worker);
    opener_.emplace(keys.worker_to_master);
  }
  bool ready() const { return sealer_.has_value(); }
  const wire::WorkerInfo& info() const { return handshake_.worker_info(); }
  const std::optional<wire::Envelope>& refusal() const { return last_; }  // when not ready
  // Seals a plain frame (length prefix, body) in place, taking the next sequence number.
  void seal(std::vector<uint8_t>& frame) { sealer_->seal(frame); }
  bool send(const wire::Envelope& m) { return send_plain_frame(net::encode_frame(m)); }
  bool send_plain_frame(std::vector<uint8_t> frame) {
    seal(frame);
    return raw_.send_bytes(frame);
  }
  bool send_bytes(const std::vector<uint8_t>& bytes) { return raw_.send_bytes(bytes); }
  // The next message other than a heartbeat; nullopt on EOF, timeout or a frame that does not open.
  std::optional<wire::Envelope> receive(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    for (;;) {
      std::array<uint8_t, 4> header{};
      std::vector<uint8_t> payload;
      if (!raw_.receive_frame(header, payload, timeout)) return std::nullopt;
      try {
        opener_->open(header, payload);
        auto m = net::decode_body(payload);
        if (!m.has_heartbeat()) return m;
      } catch (const net::ProtocolError&) {
        return std::nullopt;
      }
    }
  }
  bool closed_by_peer(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) { return raw_.closed_by_peer(timeout); }

 private:
  RawClient raw_;
  net::MasterHandshake handshake_;
  std::optional<net::FrameSealer> sealer_;
  std::optional<net::FrameOpener> opener_;
  std::optional<wire::Envelope> last_;
};

}  // namespace tessera::testing
