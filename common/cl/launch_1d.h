#pragma once
// One-dimensional kernel launches and buffer fills, for kernels that walk a list (voxels, bricks,
// triangles) rather than an image. Companions of launch_2d in commands.h.
#include <cstddef>
#include <cstdint>

#include "common/cl/commands.h"

namespace tessera::cl {

// Enqueues `kernel` over `global` work-items (rounded up to a multiple of `local` when local != 0,
// so kernels must ignore ids beyond their count); does not wait. global 0 is a no-op (empty Event).
Event launch_1d(const Device& device, const Kernel& kernel, size_t global, size_t local = 0);

// Fills `bytes` of the buffer from `offset` with a repeated 32-bit value (clEnqueueFillBuffer);
// does not wait. bytes and offset must be multiples of 4. bytes 0 is a no-op.
Event fill_buffer_u32(const Device& device, const Buffer& buffer, uint32_t value, size_t bytes, size_t offset = 0);

}  // namespace tessera::cl
