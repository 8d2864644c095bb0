/* A batch of tiles rendered in one launch (raytrace_tiles): each tile is TS_BATCH_TILE_WORDS words
 * in the tile list, x0, y0, width, height, eye (0 left, 1 right), and the index of its first pixel
 * in the batch's output, where its pixels lie row by row. Shared by the kernel and the host code. */
#ifndef TESSERA_KERNELS_RENDER_TILE_BATCH_H
#define TESSERA_KERNELS_RENDER_TILE_BATCH_H

#include "kernels/base/compat.h"

#define TS_BATCH_TILE_WORDS 6u

/* One work item of a batch launch: work item rows [t * rows_per_tile, (t + 1) * rows_per_tile) are
 * tile t, and the launch is as wide and tall as the largest tile. */
typedef struct TileBatchItem {
  uint px, py;  /* the pixel in its eye's image */
  uint eye;     /* 0 left, 1 right */
  uint index;   /* where its pixel goes in the batch's output */
} TileBatchItem;

/* The item of work item (gx, gy); 0 where it lies outside its tile (or past the last tile). */
TS_FN int tile_batch_item(TS_GLOBAL const uint* tiles, uint tile_count, uint rows_per_tile, uint gx, uint gy,
                          TileBatchItem* item) {
  uint t = gy / rows_per_tile, y = gy % rows_per_tile;
  TS_GLOBAL const uint* tile;
  if (t >= tile_count) return 0;
  tile = tiles + t * TS_BATCH_TILE_WORDS;
  if (gx >= tile[2] || y >= tile[3]) return 0;
  item->px = tile[0] + gx;
  item->py = tile[1] + y;
  item->eye = tile[4];
  item->index = tile[5] + y * tile[2] + gx;
  return 1;
}

#endif
