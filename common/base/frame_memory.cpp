#include "common/base/frame_memory.h"

#include <malloc.h>

namespace tessera {

void keep_frame_buffers_resident() {
#if defined(__GLIBC__)
  // Setting either threshold also stops glibc from adjusting it on its own.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
#endif
}

}  // namespace tessera
