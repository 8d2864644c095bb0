#pragma once
// A fixed set of threads running posted tasks in the order they were posted (each on whichever
// thread is free). For work that must leave a latency-critical thread: tile encoding on the
// worker, tile decoding and compositing on the master.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera {

class TaskPool {
 public:
  // threads 0: half the cores, at least one.
  explicit TaskPool(unsigned threads = 0);
  ~TaskPool();  // runs the queued tasks, then joins
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  // Any thread. A task that throws is a bug in the caller: the exception is logged to stderr and dropped.
  void post(std::function<void()> task);
  size_t queued() const;
  unsigned threads() const { return unsigned(threads_.size()); }

 private:
  void run();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tessera
