#include "master/frame/ownership_overlay.h"

namespace tessera::master {

Rgba8 worker_colour(int worker) {
  static const Rgba8 palette[] = {{230, 25, 75, 255},  {60, 180, 75, 255},  {0, 130, 200, 255},  {245, 130, 48, 255},
                                  {145, 30, 180, 255}, {70, 240, 240, 255}, {240, 50, 230, 255}, {210, 245, 60, 255},
                                  {0, 128, 128, 255},  {170, 110, 40, 255}, {128, 0, 0, 255},    {0, 0, 128, 255}};
  if (worker < 0) return {0, 0, 0, 255};
  return palette[size_t(worker) % (sizeof palette / sizeof palette[0])];
}

ImageRgba8 ownership_overlay(const ImageRgba8& frame, const net::TileGrid& grid, const std::vector<int>& owners) {
  ImageRgba8 out(frame.width(), frame.height());
  for (uint32_t id = 0; id < grid.tile_count(); ++id) {
    const net::TileSpec t = grid.tile(id);
    const Rgba8 tint = worker_colour(id < owners.size() ? owners[id] : -1);
    const uint32_t x_base = t.eye * grid.width();
    for (uint32_t y = t.y0; y < t.y0 + t.height; ++y)
      for (uint32_t x = t.x0; x < t.x0 + t.width; ++x) {
        const Rgba8 p = frame.at(int(x_base + x), int(y));
        const int grey = (p.r * 3 + p.g * 6 + p.b) / 10;
        const bool border = x == t.x0 || y == t.y0;
        const auto mix = [&](uint8_t c) { return uint8_t(border ? c / 3 : (c * 11 + grey * 9) / 20); };
        out.set(int(x_base + x), int(y), {mix(tint.r), mix(tint.g), mix(tint.b), 255});
      }
  }
  return out;
}

}  // namespace tessera::master
