/* The pixels a packet of camera rays covers on CPU devices: a block of TS_PACKET_BLOCK_W x
 * TS_PACKET_BLOCK_H, one pixel a SIMD lane (kernels/base/simd.h), lane l at (l % W, l / W). OpenCL
 * CPU devices' blocks are 2 x 4; the host needs that shape to size their launches. */
#ifndef TESSERA_KERNELS_RENDER_PACKET_BLOCK_H
#define TESSERA_KERNELS_RENDER_PACKET_BLOCK_H
#include "kernels/base/simd.h"

#define TS_PACKET_BLOCK_W 2u
#define TS_PACKET_BLOCK_H (TS_SIMD_LANES / TS_PACKET_BLOCK_W)
#define TS_PACKET_BLOCK_H_OPENCL_CPU (TS_SIMD_LANES_OPENCL_CPU / TS_PACKET_BLOCK_W)

#endif
