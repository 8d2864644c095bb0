#include "worker/daemon/render_thread.h"

#include "common/net/log.h"

namespace tessera::worker {

RenderThread::RenderThread() : thread_([this] { run(); }) {}

RenderThread::~RenderThread() { stop(); }

void RenderThread::post(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

size_t RenderThread::pending() const {
  std::lock_guard lock(mutex_);
  return jobs_.size();
}

void RenderThread::stop() {
  stop_flag_ = true;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    jobs_.clear();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RenderThread::run() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      busy_ = true;
    }
    try {
      job();
    } catch (const std::exception& e) {
      net::log_warning(std::string("render job failed: ") + e.what());
    }
    busy_ = false;
  }
}

}  // namespace tessera::worker
