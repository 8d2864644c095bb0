#include "worker/render/batch_launch_list.h"

#include <algorithm>

#include "common/base/error.h"
#include "kernels/render/tile_batch.h"

namespace tessera {

BatchLaunchList batch_launch_list(std::span<const BatchTile> tiles, size_t out_pixels) {
  BatchLaunchList list;
  list.words.reserve(tiles.size() * TS_BATCH_TILE_WORDS);
  for (const BatchTile& t : tiles) {
    const uint64_t pixels = uint64_t(t.rect.width) * t.rect.height;
    if (t.eye > 1 || t.offset + pixels > out_pixels || t.offset > UINT32_MAX - pixels)
      throw Error("batch tile outside the batch's output");
    list.words.insert(list.words.end(), {cl_uint(t.rect.x0), cl_uint(t.rect.y0), cl_uint(t.rect.width),
                                         cl_uint(t.rect.height), cl_uint(t.eye), cl_uint(t.offset)});
    list.max_width = std::max(list.max_width, t.rect.width);
    list.max_height = std::max(list.max_height, t.rect.height);
    list.pixels = std::max(list.pixels, t.offset + pixels);
  }
  return list;
}

}  // namespace tessera
