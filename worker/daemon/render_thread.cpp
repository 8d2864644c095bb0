#include "worker/daemon/render_thread.h"

#include <chrono>

#include "common/net/log.h"

namespace tessera::worker {
namespace {

// How soon a source that was blocked on its output is tried again.
constexpr auto kBlockedRetry = std::chrono::milliseconds(2);

}  // namespace

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

void RenderThread::attach(std::weak_ptr<RenderWork> source) {
  {
    std::lock_guard lock(mutex_);
    sources_.push_back(std::move(source));
    woken_ = true;
  }
  wake_.notify_one();
}

void RenderThread::wake() {
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
  }
  wake_.notify_one();
}

size_t RenderThread::pending() const {
  std::lock_guard lock(mutex_);
  return jobs_.size();
}

bool RenderThread::busy() const {
  if (busy_) return true;
  std::lock_guard lock(mutex_);
  if (!jobs_.empty()) return true;
  for (const auto& weak : sources_)
    if (const auto source = weak.lock(); source && source->has_work()) return true;
  return false;
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

RenderWork::Step RenderThread::serve_sources() {
  std::vector<std::shared_ptr<RenderWork>> live;
  size_t start = 0;
  {
    std::lock_guard lock(mutex_);
    std::erase_if(sources_, [](const auto& weak) { return weak.expired(); });
    for (const auto& weak : sources_)
      if (auto source = weak.lock()) live.push_back(std::move(source));
    start = live.empty() ? 0 : next_source_ % live.size();
  }
  RenderWork::Step result = RenderWork::Step::idle;
  for (size_t i = 0; i < live.size(); ++i) {
    const size_t index = (start + i) % live.size();
    const RenderWork::Step step = live[index]->run_step();
    if (step == RenderWork::Step::ran) {
      std::lock_guard lock(mutex_);
      next_source_ = index + 1;  // the next step goes to the next source: masters share the device
      return step;
    }
    if (step == RenderWork::Step::blocked) result = step;
  }
  return result;
}

void RenderThread::run() {
  for (;;) {
    std::function<void()> job;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      if (!jobs_.empty()) {
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      woken_ = false;  // work queued from now on wakes the wait below
    }
    busy_ = true;
    RenderWork::Step step = RenderWork::Step::ran;
    try {
      if (job)
        job();
      else
        step = serve_sources();
    } catch (const std::exception& e) {
      net::log_warning(std::string("render job failed: ") + e.what());
    }
    busy_ = false;
    if (step == RenderWork::Step::ran) continue;
    std::unique_lock lock(mutex_);
    const auto ready = [&] { return stopping_ || woken_ || !jobs_.empty(); };
    if (step == RenderWork::Step::blocked)
      wake_.wait_for(lock, kBlockedRetry, ready);
    else
      wake_.wait(lock, ready);
  }
}

}  // namespace tessera::worker
