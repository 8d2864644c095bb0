#pragma once
// The tile list of a launch that renders a batch of tiles (raytrace_tiles, vct_tiles*): the words
// the kernels read (kernels/render/tile_batch.h) and the extent of the launch and its output.
#include <CL/cl.h>

#include <cstdint>
#include <span>
#include <vector>

#include "worker/render/tile_renderer.h"

namespace tessera {

struct BatchLaunchList {
  std::vector<cl_uint> words;  // TS_BATCH_TILE_WORDS a tile
  uint32_t max_width = 0, max_height = 0;
  uint64_t pixels = 0;  // where the batch's output ends
};

// Throws Error when a tile lies outside `out_pixels` or names an eye other than 0 and 1.
BatchLaunchList batch_launch_list(std::span<const BatchTile> tiles, size_t out_pixels);

}  // namespace tessera
