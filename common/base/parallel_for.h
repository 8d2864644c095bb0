#pragma once
// A frame-sized host loop spread over the machine's cores: body(begin, end) runs on contiguous
// chunks of [0, count), one per hardware thread (the calling thread takes the first). Threads are
// started per call: meant for loops of ~10^5+ cheap items (resolving a frame), not tiny ones.
#include <cstddef>
#include <functional>

namespace tessera {

void parallel_for_chunks(size_t count, size_t min_chunk, const std::function<void(size_t begin, size_t end)>& body);

}  // namespace tessera
