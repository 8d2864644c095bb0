#pragma once
// Launch size of the kernels whose work item renders one pixel, or on devices that take the
// kernels' CPU paths a block of pixels traced as one ray packet (kernels/render/packet_block.h).
#include <cstdint>

#include "common/cl/commands.h"
#include "common/cl/program.h"
#include "kernels/render/packet_block.h"

namespace tessera {

inline cl::Range2D pixel_work_items(const cl::Device& device, uint32_t width, uint32_t height) {
  if (!cl::uses_cpu_paths(device)) return {width, height};
  return {(width + TS_PACKET_BLOCK_W - 1) / TS_PACKET_BLOCK_W,
          (height + TS_PACKET_BLOCK_H_OPENCL_CPU - 1) / TS_PACKET_BLOCK_H_OPENCL_CPU};
}

}  // namespace tessera
