#pragma once
// Live poses from an AR/VR device: UDP datagrams, each one pose record in the CSV or JSON form
// of pose_parse.h (docs/tessera-master.md documents it). A receiver thread keeps the newest pose; next()
// waits for the first one, then for one newer than the last it returned, and returns the newest
// (a new frame starts from the freshest head pose, never from a queue of stale ones, and a pose is
// rendered once: no repeated frames of an old pose while the head holds still). poll() does the
// same without blocking. The stream ends after a silence.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/net/address.h"
#include "master/pose/pose_source.h"

namespace tessera::master {

class UdpPoseSource final : public PoseSource {
 public:
  // Binds HOST:PORT; throws Error when it cannot.
  UdpPoseSource(const net::HostPort& address, double timeout_seconds);
  ~UdpPoseSource() override;
  std::optional<PoseSample> next() override;
  Offer poll() override;
  void set_wake(std::function<void()> wake) override;
  bool newer_pose_waiting() const override;
  std::string describe() const override;
  bool live() const override { return true; }
  uint16_t port() const { return port_; }

 private:
  void receive_loop();

  net::HostPort address_;
  uint16_t port_ = 0;
  double timeout_seconds_;
  int socket_ = -1;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::optional<PoseSample> latest_;
  uint64_t received_ = 0, rejected_ = 0;
  uint64_t returned_ = 0;  // received_ when a pose was last handed out
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::function<void()> wake_;
  std::thread thread_;
};

}  // namespace tessera::master
