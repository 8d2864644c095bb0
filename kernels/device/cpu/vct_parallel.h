#pragma once
// The host backend's work items of the vct mode run on a few threads, in chunks (vct_cpu.cpp,
// vct_update_cpu.cpp).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace tessera::cpu {

// Runs fn(i) for i in [0, count) on `threads` threads (0: all cores), in chunks.
template <typename Fn>
void vct_parallel_for(uint64_t count, unsigned threads, Fn&& fn) {
  if (count == 0) return;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const uint64_t chunk = std::max<uint64_t>(1, std::min<uint64_t>(1024, count / (uint64_t(threads) * 8) + 1));
  std::atomic<uint64_t> next{0};
  auto work = [&] {
    for (uint64_t start; (start = next.fetch_add(chunk)) < count;)
      for (uint64_t i = start, end = std::min(count, start + chunk); i < end; ++i) fn(i);
  };
  if (threads == 1 || count <= chunk) {
    work();
    return;
  }
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

}  // namespace tessera::cpu
