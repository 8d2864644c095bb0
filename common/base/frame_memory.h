#pragma once
// Frame-sized buffers (a few MB: tile batches, frame images, read-backs) are allocated and freed
// every frame. glibc serves blocks that large from fresh mmap pages and returns freed heap tops
// to the system, so each frame pays a page fault per 4 KiB touched again — about 3 ms a stereo
// 640x480 frame on a virtualized GPU host, as much as the rendering. Programs that render or
// composite frames call this first thing in main: blocks up to 64 MiB come from the heap, and up
// to 128 MiB freed at its top stay mapped for the next frame. Larger blocks (scenes) still map.
#include <cstddef>

namespace tessera {

void keep_frame_buffers_resident();

// What keep_frame_buffers_resident() keeps also keeps a transient's memory: a held pose's
// accumulation, a slow link's backlog or a reconnecting page raise the heap once, and the process
// would hold that high-water mark for hours. Long-running programs call this now and then (the
// live session: every kFreeMemoryReleaseInterval): free heap pages go back to the system, and
// the next frame faults its buffers in once again (a few hundred microseconds). Returns the bytes
// the process's resident set shrank by (0 where the C library cannot tell).
size_t release_free_heap_memory();

}  // namespace tessera
