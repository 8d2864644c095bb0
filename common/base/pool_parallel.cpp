#include "common/base/pool_parallel.h"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>

namespace tessera {
namespace {

// Shared by the caller and its helper tasks; a helper may outlive the call (it then finds nothing to claim).
struct Work {
  std::function<void(size_t)> body;
  size_t count = 0;
  std::atomic<size_t> next{0};
  std::mutex mutex;
  std::condition_variable done_changed;
  size_t done = 0;
  std::exception_ptr error;

  void claim_all() {
    for (size_t i; (i = next.fetch_add(1)) < count;) {
      std::exception_ptr failed;
      try {
        body(i);
      } catch (...) {
        failed = std::current_exception();
      }
      std::lock_guard lock(mutex);
      if (failed && !error) error = failed;
      if (++done == count) done_changed.notify_all();
    }
  }
};

}  // namespace

void run_on_pool(TaskPool& pool, size_t count, const std::function<void(size_t)>& body) {
  if (count == 0) return;
  if (count == 1) return body(0);
  auto work = std::make_shared<Work>();
  work->body = body;
  work->count = count;
  const size_t helpers = std::min<size_t>(count - 1, pool.threads());
  for (size_t h = 0; h < helpers; ++h) pool.post([work] { work->claim_all(); });
  work->claim_all();
  std::unique_lock lock(work->mutex);
  work->done_changed.wait(lock, [&] { return work->done == work->count; });
  if (work->error) std::rethrow_exception(work->error);
}

}  // namespace tessera
