#pragma once
// Tile ownership made visible (the paper's Fig. 8b): every tile tinted with the colour of the
// worker that rendered it, over a grey version of the frame, with tile borders.
#include <vector>

#include "common/image/image.h"
#include "common/net/tile_grid.h"

namespace tessera::master {

Rgba8 worker_colour(int worker);  // a fixed palette; -1 (missing) is black
ImageRgba8 ownership_overlay(const ImageRgba8& frame, const net::TileGrid& grid, const std::vector<int>& owners);

}  // namespace tessera::master
