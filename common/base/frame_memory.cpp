#include "common/base/frame_memory.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdio>

namespace tessera {

void keep_frame_buffers_resident() {
#if defined(__GLIBC__)
  // Setting either threshold also stops glibc from adjusting it on its own.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
#endif
}

namespace {

size_t resident_bytes() {
  long pages = 0, resident = 0;
  if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(statm);
  }
  return size_t(resident) * size_t(sysconf(_SC_PAGESIZE));
}

}  // namespace

size_t release_free_heap_memory() {
#if defined(__GLIBC__)
  const size_t before = resident_bytes();
  malloc_trim(0);  // every arena: free pages inside the heap as well as its top
  const size_t after = resident_bytes();
  return before > after ? before - after : 0;
#else
  return 0;
#endif
}

}  // namespace tessera
