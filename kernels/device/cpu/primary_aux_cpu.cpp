#include "kernels/device/cpu/primary_aux_cpu.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "common/base/error.h"

namespace tessera::cpu {

void primary_aux_tile(const SceneView& scene, const ShadingContext& shading, const RenderSettings& settings,
                      const AuxSettings& aux, const CameraParams& camera, const TileRect& tile, std::span<uint32_t> out,
                      unsigned threads) {
  if (out.size() != size_t(tile.width) * tile.height) throw Error("tile buffer has the wrong size");
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, tile.height);  // a row a task: more threads than rows would only wait
  std::atomic<uint32_t> next_row{0};
  auto work = [&] {
    for (uint32_t y; (y = next_row.fetch_add(1)) < tile.height;)
      for (uint32_t x = 0; x < tile.width; ++x)
        out[size_t(y) * tile.width + x] =
            primary_aux_pixel(&scene, &shading, &settings, &aux, &camera, tile.x0 + x, tile.y0 + y);
  };
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

}  // namespace tessera::cpu
