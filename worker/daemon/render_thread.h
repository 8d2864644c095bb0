#pragma once
// The worker's render thread (the paper's "Thread Main" on the worker): runs scene loads and the
// connections' render work one step at a time, while the network thread ("Thread Sub") keeps
// sending finished tiles and receiving requests, so rendering and transfer overlap.
// Each master connection is a RenderWork source with its own queue: the thread serves the sources
// in turn, one step (one batch of tiles) each, and passes over a source whose output may not grow
// now, so one master that does not read its tiles never holds up the others.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::worker {

class RenderWork {
 public:
  virtual ~RenderWork() = default;
  enum class Step {
    idle,     // nothing queued
    blocked,  // work queued, but its output may not grow now (the peer reads too slowly)
    ran,      // did one step of work
  };
  // Render thread only.
  virtual Step run_step() = 0;
  // Any thread: work is queued or running.
  virtual bool has_work() const = 0;
};

class RenderThread {
 public:
  RenderThread();
  ~RenderThread();  // stop()s

  // Any thread. Jobs run in order, before any source's next step; a job that throws is a bug in
  // the caller (logged, skipped).
  void post(std::function<void()> job);
  // Any thread. The source is served until it expires; wake() after queuing work on it.
  void attach(std::weak_ptr<RenderWork> source);
  void wake();
  // Lets the running step finish (long steps poll stopping()), drops the queued jobs and joins.
  void stop();
  bool busy() const;
  // True once stop() was called: a long-running step should give up.
  bool stopping() const { return stop_flag_; }
  size_t pending() const;  // queued jobs (scene loads)

 private:
  void run();
  // One step of the next source in turn that has something it can do now.
  RenderWork::Step serve_sources();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::weak_ptr<RenderWork>> sources_;
  size_t next_source_ = 0;
  bool woken_ = false;
  bool stopping_ = false;
  std::atomic<bool> busy_{false};
  std::atomic<bool> stop_flag_{false};
  std::thread thread_;
};

}  // namespace tessera::worker
