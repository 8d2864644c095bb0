#include "common/base/parallel_for.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace tessera {

void parallel_for_chunks(size_t count, size_t min_chunk, const std::function<void(size_t, size_t)>& body) {
  if (count == 0) return;
  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const size_t chunks = std::max<size_t>(1, std::min(hw, count / std::max<size_t>(1, min_chunk)));
  if (chunks == 1) return body(0, count);
  const size_t step = (count + chunks - 1) / chunks;
  std::vector<std::thread> threads;
  threads.reserve(chunks - 1);
  for (size_t c = 1; c < chunks; ++c) {
    const size_t begin = c * step, end = std::min(count, begin + step);
    if (begin < end) threads.emplace_back(body, begin, end);
  }
  body(0, std::min(count, step));
  for (std::thread& t : threads) t.join();
}

}  // namespace tessera
