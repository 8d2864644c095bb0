#pragma once
// A blocking FIFO between the master's network thread and its scheduling thread.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace tessera::master {

template <typename T>
class EventQueue {
 public:
  void push(T item) {
    {
      std::lock_guard lock(mutex_);
      items_.push_back(std::move(item));
    }
    ready_.notify_one();
  }
  // Ends the current (or next) pop() early, empty-handed: the consumer has other work to look at.
  void interrupt() {
    {
      std::lock_guard lock(mutex_);
      interrupted_ = true;
    }
    ready_.notify_one();
  }
  // The oldest item, waiting until `deadline` at most (or until interrupt()).
  std::optional<T> pop(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    ready_.wait_until(lock, deadline, [&] { return !items_.empty() || interrupted_; });
    interrupted_ = false;
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<T> items_;
  bool interrupted_ = false;
};

}  // namespace tessera::master
