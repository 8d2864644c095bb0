#pragma once
// Frame-sized buffers (a few MB: tile batches, frame images, read-backs) are allocated and freed
// every frame. glibc serves blocks that large from fresh mmap pages and returns freed heap tops
// to the system, so each frame pays a page fault per 4 KiB touched again — about 3 ms a stereo
// 640x480 frame on a virtualized GPU host, as much as the rendering. Programs that render or
// composite frames call this first thing in main: blocks up to 64 MiB come from the heap, and up
// to 128 MiB freed at its top stay mapped for the next frame. Larger blocks (scenes) still map.
namespace tessera {

void keep_frame_buffers_resident();

}  // namespace tessera
