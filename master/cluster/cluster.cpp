#include "master/cluster/cluster.h"

#include "common/net/log.h"

#include <algorithm>

namespace tessera::master {
namespace {

constexpr std::chrono::milliseconds kFirstHandshakeRetry{50}, kLastHandshakeRetry{1000};

}  // namespace

Cluster::Cluster(std::vector<net::HostPort> workers, LinkOptions options, std::shared_ptr<const SceneFile> scene,
                 std::chrono::milliseconds reconnect_interval)
    : addresses_(std::move(workers)),
      options_(std::move(options)),
      scene_(std::move(scene)),
      reconnect_interval_(reconnect_interval),
      links_(addresses_.size()),
      handshake_backoff_(addresses_.size(), kFirstHandshakeRetry),
      was_ready_(addresses_.size(), false) {
  for (size_t i = 0; i < addresses_.size(); ++i) retry_timers_.push_back(std::make_unique<asio::steady_timer>(io_));
}

Cluster::~Cluster() { stop(); }

void Cluster::start() {
  startup_ends_ = std::chrono::steady_clock::now() + options_.startup_timeout;
  work_.emplace(io_.get_executor());
  thread_ = std::thread([this] { io_.run(); });
  asio::post(io_, [this] {
    for (int i = 0; i < int(addresses_.size()); ++i) open_link(i);
  });
}

void Cluster::open_link(int worker) {
  if (stopping_) return;
  auto link = std::make_shared<WorkerLink>(io_, worker, addresses_[size_t(worker)], options_, scene_, &tile_pool_,
                                           [this](LinkEvent e) { on_event(std::move(e)); });
  {
    std::lock_guard lock(mutex_);
    links_[size_t(worker)] = link;
  }
  link->connect();
}

bool Cluster::retry_handshake(const LinkEvent& event) {
  const size_t worker = size_t(event.worker);
  if (event.kind != LinkEvent::Kind::failed || !event.temporary || was_ready_[worker] || stopping_) return false;
  const auto delay = handshake_backoff_[worker];
  if (std::chrono::steady_clock::now() + delay >= startup_ends_) return false;
  // said once, at once: a listed address that is no worker (a typo, another service) would otherwise
  // keep the start silent for the whole startup timeout
  if (delay == kFirstHandshakeRetry) {
    const auto left = std::chrono::duration_cast<std::chrono::seconds>(startup_ends_ - std::chrono::steady_clock::now());
    net::log_warning(addresses_[worker].text() + ": " + event.reason + "; trying again for up to " +
                     std::to_string(left.count()) + " s (--startup-timeout)");
  }
  handshake_backoff_[worker] = std::min(delay * 2, kLastHandshakeRetry);
  auto& timer = *retry_timers_[worker];
  timer.expires_after(delay);
  timer.async_wait([this, worker](const asio::error_code& ec) {
    if (!ec) open_link(int(worker));
  });
  return true;
}

void Cluster::on_event(LinkEvent event) {
  const bool gone = event.kind == LinkEvent::Kind::failed || event.kind == LinkEvent::Kind::lost;
  const int worker = event.worker;
  if (event.kind == LinkEvent::Kind::ready) was_ready_[size_t(worker)] = true;
  if (retry_handshake(event)) return;
  events_.push(std::move(event));
  if (!gone || stopping_ || reconnect_interval_.count() == 0) return;
  auto& timer = *retry_timers_[size_t(worker)];
  timer.expires_after(reconnect_interval_);
  timer.async_wait([this, worker](const asio::error_code& ec) {
    if (!ec) open_link(worker);
  });
}

void Cluster::send(int worker, const wire::Envelope& message) {
  std::shared_ptr<WorkerLink> link;
  {
    std::lock_guard lock(mutex_);
    link = links_[size_t(worker)];
  }
  if (link) link->send(message);
}

void Cluster::drop(int worker, const std::string& reason) {
  std::shared_ptr<WorkerLink> link;
  {
    std::lock_guard lock(mutex_);
    link = links_[size_t(worker)];
  }
  if (link) link->close(reason);
}

void Cluster::stop() {
  if (!thread_.joinable()) return;
  asio::post(io_, [this] {
    stopping_ = true;
    for (auto& timer : retry_timers_) timer->cancel();
    std::lock_guard lock(mutex_);
    for (auto& link : links_)
      if (link) link->close("the master is shutting down");
  });
  work_.reset();
  // Give the closes a moment to flush, then stop whatever is left (heartbeat timers).
  asio::post(io_, [this] {
    auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(100));
    timer->async_wait([this, timer](const asio::error_code&) { io_.stop(); });
  });
  thread_.join();
  std::lock_guard lock(mutex_);
  links_.clear();
}

}  // namespace tessera::master
