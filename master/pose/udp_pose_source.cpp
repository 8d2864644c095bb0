#include "master/pose/udp_pose_source.h"

#include <algorithm>
#include <cstring>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/base/error.h"
#include "common/net/log.h"
#include "master/pose/pose_parse.h"

namespace tessera::master {

UdpPoseSource::UdpPoseSource(const net::HostPort& address, double timeout_seconds)
    : address_(address), timeout_seconds_(timeout_seconds) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(address.host.c_str(), std::to_string(address.port).c_str(), &hints, &found) != 0 || !found)
    throw Error("cannot resolve udp://" + address.text());
  socket_ = ::socket(found->ai_family, SOCK_DGRAM, 0);
  const bool bound = socket_ >= 0 && ::bind(socket_, found->ai_addr, found->ai_addrlen) == 0;
  ::freeaddrinfo(found);
  if (!bound) {
    const std::string why = std::strerror(errno);
    if (socket_ >= 0) ::close(socket_);
    throw Error("cannot listen on udp://" + address.text() + ": " + why);
  }
  sockaddr_storage local{};
  socklen_t length = sizeof local;
  ::getsockname(socket_, reinterpret_cast<sockaddr*>(&local), &length);
  port_ = ntohs(local.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  timeval poll{0, 100000};  // lets the thread notice stop_ within 0.1 s
  ::setsockopt(socket_, SOL_SOCKET, SO_RCVTIMEO, &poll, sizeof poll);
  thread_ = std::thread([this] { receive_loop(); });
}

UdpPoseSource::~UdpPoseSource() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (socket_ >= 0) ::close(socket_);
}

void UdpPoseSource::receive_loop() {
  char buffer[kMaxPoseDatagramBytes];
  while (!stop_) {
    // MSG_TRUNC: the datagram's full length, so an oversized one is refused, not read cut short.
    const ssize_t length = ::recv(socket_, buffer, sizeof buffer, MSG_TRUNC);
    if (length <= 0) continue;
    try {
      const size_t received = std::min(size_t(length), sizeof buffer);
      auto sample = parse_pose_datagram(std::string_view(buffer, received), size_t(length));
      if (!sample) continue;
      sample->acquired = std::chrono::steady_clock::now();
      std::function<void()> wake;
      {
        std::lock_guard lock(mutex_);
        latest_ = sample;
        ++received_;
        wake = wake_;
      }
      arrived_.notify_all();
      if (wake) wake();
    } catch (const std::exception& e) {
      if (rejected_++ < 5) net::log_warning(std::string("ignoring a bad ") + e.what());
    }
  }
}

std::optional<PoseSample> UdpPoseSource::next() {
  std::unique_lock lock(mutex_);
  const auto timeout = std::chrono::duration<double>(timeout_seconds_);
  if (!latest_ && !arrived_.wait_for(lock, timeout, [&] { return latest_.has_value(); }))
    throw Error("no pose arrived on udp://" + address_.text() + " within " + std::to_string(int(timeout_seconds_)) + " s");
  if (!arrived_.wait_for(lock, timeout, [&] { return received_ > returned_; })) {
    net::log_info("pose stream on udp://" + address_.text() + " silent for " + std::to_string(int(timeout_seconds_)) + " s: ending");
    return std::nullopt;
  }
  returned_ = received_;
  return latest_;
}

PoseSource::Offer UdpPoseSource::poll() {
  std::lock_guard lock(mutex_);
  const auto timeout = std::chrono::duration<double>(timeout_seconds_);
  const auto now = std::chrono::steady_clock::now();
  if (!latest_) {
    if (now - started_ > timeout)
      throw Error("no pose arrived on udp://" + address_.text() + " within " + std::to_string(int(timeout_seconds_)) + " s");
    return {};
  }
  if (received_ > returned_) {
    returned_ = received_;
    return {latest_, false};
  }
  if (now - latest_->acquired > timeout) {
    net::log_info("pose stream on udp://" + address_.text() + " silent for " + std::to_string(int(timeout_seconds_)) + " s: ending");
    return {std::nullopt, true};
  }
  return {};
}

void UdpPoseSource::set_wake(std::function<void()> wake) {
  std::lock_guard lock(mutex_);
  wake_ = std::move(wake);
}

bool UdpPoseSource::newer_pose_waiting() const {
  std::lock_guard lock(mutex_);
  return received_ > returned_;
}

std::string UdpPoseSource::describe() const { return "udp://" + address_.host + ":" + std::to_string(port_); }

}  // namespace tessera::master
