/* A batch of tiles rendered in one launch (raytrace_tiles): each tile is TS_BATCH_TILE_WORDS words
 * in the tile list, x0, y0, width, height, eye (0 left, 1 right), and the index of its first pixel
 * in the batch's output, where its pixels lie row by row. Shared by the kernel and the host code. */
#ifndef TESSERA_KERNELS_RENDER_TILE_BATCH_H
#define TESSERA_KERNELS_RENDER_TILE_BATCH_H

#define TS_BATCH_TILE_WORDS 6u

#endif
