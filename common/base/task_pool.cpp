#include "common/base/task_pool.h"

#include <algorithm>
#include <cstdio>
#include <exception>

namespace tessera {

TaskPool::TaskPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency() / 2);
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

TaskPool::~TaskPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void TaskPool::post(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
}

size_t TaskPool::queued() const {
  std::lock_guard lock(mutex_);
  return tasks_.size();
}

void TaskPool::run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and everything posted has run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    try {
      task();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "task failed: %s\n", e.what());
    }
  }
}

}  // namespace tessera
