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

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/base/file_io.h"
#include "common/image/png_io.h"
#include "common/net/auth.h"
#include "common/net/framing.h"
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

inline void write_secret(const std::filesystem::path& path, const std::string& secret) { write_text(path, secret + "\n"); }

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
  explicit RawClient(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
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

// The master's side of the handshake with `secret`: the worker's Welcome, or whatever it answered
// instead (nullopt on a closed connection or a timeout).
inline std::optional<wire::Envelope> master_handshake(RawClient& client, const std::string& secret) {
  const std::string nonce = net::random_nonce();
  wire::Envelope hello;
  hello.mutable_hello()->set_protocol_version(net::kProtocolVersion);
  hello.mutable_hello()->set_nonce(nonce);
  client.send(hello);
  const auto challenge = client.receive();
  if (!challenge || !challenge->has_challenge()) return challenge;
  wire::Envelope proof;
  proof.mutable_proof()->set_proof(net::make_proof(secret, net::Role::master, net::kProtocolVersion, nonce, challenge->challenge().nonce()));
  client.send(proof);
  return client.receive();
}

}  // namespace tessera::testing
