#pragma once
// The master's set of workers: one io thread running every WorkerLink, events for the
// scheduling thread in one queue, and background reconnects so a lost or unreachable worker
// can rejoin later.
#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "common/base/task_pool.h"
#include "common/net/asio.h"
#include "master/cluster/event_queue.h"
#include "master/cluster/worker_link.h"

namespace tessera::master {

class Cluster {
 public:
  // reconnect_interval 0: never retry a worker that failed or was lost.
  Cluster(std::vector<net::HostPort> workers, LinkOptions options, std::shared_ptr<const SceneFile> scene,
          std::chrono::milliseconds reconnect_interval);
  ~Cluster();  // closes every link and joins the io thread

  void start();
  std::optional<LinkEvent> next_event(std::chrono::steady_clock::time_point deadline) { return events_.pop(deadline); }
  // Any thread: makes a waiting next_event() return now (a live pose arrived).
  void wake() { events_.interrupt(); }
  void send(int worker, const wire::Envelope& message);
  // Any thread: queues an event of the master's own (a tile composited) behind the workers' ones.
  void post(LinkEvent event) { events_.push(std::move(event)); }
  // Ends the worker's connection; a lost (or failed) event follows, then reconnect attempts.
  void drop(int worker, const std::string& reason);
  size_t size() const { return addresses_.size(); }
  const net::HostPort& address(int worker) const { return addresses_[size_t(worker)]; }
  // The master's tile threads: they open and parse the workers' large sealed frames and, for the
  // session, decode and composite tiles.
  TaskPool& tile_pool() { return tile_pool_; }
  void stop();

 private:
  void open_link(int worker);           // io thread
  void on_event(LinkEvent event);       // io thread
  bool retry_handshake(const LinkEvent& event);  // io thread: true when the failure is retried

  std::vector<net::HostPort> addresses_;
  LinkOptions options_;
  std::shared_ptr<const SceneFile> scene_;
  std::chrono::milliseconds reconnect_interval_;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;
  std::mutex mutex_;  // links_ is replaced on the io thread and read by send()/drop()
  std::vector<std::shared_ptr<WorkerLink>> links_;
  std::vector<std::unique_ptr<asio::steady_timer>> retry_timers_;
  std::vector<std::chrono::milliseconds> handshake_backoff_;  // per worker, doubles per temporary failure
  std::vector<bool> was_ready_;
  std::chrono::steady_clock::time_point startup_ends_;
  EventQueue<LinkEvent> events_;
  bool stopping_ = false;
  // Half the cores, at least two, so that opening one part of a batch and compositing the tiles of
  // the one before overlap. Last: drained first, while the io context and the event queue its
  // tasks post to still exist.
  TaskPool tile_pool_{std::max(2u, std::thread::hardware_concurrency() / 2)};
};

}  // namespace tessera::master
