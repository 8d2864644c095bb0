#pragma once
// The worker's render thread (the paper's "Thread Main" on the worker): runs scene loads and
// tile renders one after another, while the network thread ("Thread Sub") keeps sending
// finished tiles and receiving requests, so rendering and transfer overlap.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace tessera::worker {

class RenderThread {
 public:
  RenderThread();
  ~RenderThread();  // stop()s

  // Any thread. Jobs run in order; a job that throws is a bug in the caller (logged, skipped).
  void post(std::function<void()> job);
  // Lets the running job finish, drops the queued ones and joins the thread.
  void stop();
  bool busy() const { return busy_ || pending() > 0; }
  // True once stop() was called: a long-running job should give up.
  bool stopping() const { return stop_flag_; }
  size_t pending() const;

 private:
  void run();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::atomic<bool> busy_{false};
  std::atomic<bool> stop_flag_{false};
  std::thread thread_;
};

}  // namespace tessera::worker
