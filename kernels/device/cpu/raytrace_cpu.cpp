#include "kernels/device/cpu/raytrace_cpu.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "common/base/error.h"

namespace tessera::cpu {

void raytrace_tile(const SceneView& scene, const ShadingContext& shading, const RenderSettings& settings,
                   const CameraParams& camera, const TileRect& tile, std::span<uint32_t> out, unsigned threads) {
  if (out.size() != size_t(tile.width) * tile.height) throw Error("tile buffer has the wrong size");
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // Rows of pixel blocks whose primary rays trace as one packet each (raytrace_block).
  std::atomic<uint32_t> next_row{0};
  const uint32_t x_end = tile.x0 + tile.width, y_end = tile.y0 + tile.height;
  auto work = [&] {
    for (uint32_t row; (row = next_row.fetch_add(1)) * TS_PACKET_BLOCK_H < tile.height;)
      for (uint32_t bx = 0; bx < tile.width; bx += TS_PACKET_BLOCK_W) {
        const uint32_t by = row * TS_PACKET_BLOCK_H;
        uint rgba[TS_SIMD_LANES];
        raytrace_block(&scene, &shading, &settings, &camera, tile.x0 + bx, tile.y0 + by, x_end, y_end, rgba);
        for (uint32_t l = 0; l < TS_SIMD_LANES; ++l) {
          const uint32_t x = camera_block_x(bx, l), y = camera_block_y(by, l);
          if (x < tile.width && y < tile.height) out[size_t(y) * tile.width + x] = rgba[l];
        }
      }
  };
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

}  // namespace tessera::cpu
