#include "kernels/device/cpu/pathtrace_cpu.h"

#include <algorithm>
#include <barrier>
#include <thread>
#include <vector>

#include "common/base/error.h"

namespace tessera::cpu {

uint32_t pathtrace_tile(const SceneView& scene, const ShadingContext& shading, const RenderSettings& settings,
                        const PathTraceParams& pt, const CameraParams& left, const CameraParams& right,
                        std::span<PtPixelOut> own, std::span<float> reproj, unsigned threads,
                        const std::atomic<bool>* stop) {
  const size_t n = size_t(pt.tile_w) * pt.tile_h;
  if (pt.eye_count < 1 || pt.eye_count > 2) throw Error("pathtrace: eye_count must be 1 or 2");
  if (own.size() != n * pt.eye_count || reproj.size() != 4 * n * pt.eye_count)
    throw Error("pathtrace: tile buffers have the wrong size");
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const uint32_t rows = pt.tile_h * pt.eye_count;
  threads = std::min<unsigned>(threads, rows);
  std::fill(own.begin(), own.end(), PtPixelOut{});
  std::fill(reproj.begin(), reproj.end(), 0.0f);
  std::vector<PtPrimary> primaries(n * pt.eye_count);
  std::atomic<uint32_t> next_row{0}, rows_done{0};
  std::atomic<bool> stopped{false};
  // Between the phases (and samples) every thread waits; the last one in resets the row counter.
  std::barrier sync(std::ptrdiff_t(threads), [&]() noexcept { next_row.store(0); });
  auto halted = [&] { return stop && stop->load(std::memory_order_relaxed); };
  auto work = [&] {
    for (uint32_t s = 0; s < pt.samples; ++s) {
      PathTraceParams p = pt;
      p.first_sample = pt.first_sample + s;
      p.samples = 1;
      for (uint32_t y; !stopped.load() && (y = next_row.fetch_add(1)) < rows;) {  // phase 1: first hits
        if (halted()) {
          stopped = true;
          break;
        }
        const uint32_t eye = y / pt.tile_h, ty = y - eye * pt.tile_h;
        const size_t base = eye * n + size_t(ty) * pt.tile_w;
        for (uint32_t x = 0; x < pt.tile_w; ++x)
          pt_primary_pixel(&scene, &shading, &settings, &p, eye ? &right : &left, eye, x, ty, &primaries[base + x], &own[base + x]);
      }
      sync.arrive_and_wait();
      for (uint32_t y; !stopped.load() && (y = next_row.fetch_add(1)) < rows;) {  // phase 2: paths
        if (halted()) {
          stopped = true;
          break;
        }
        const uint32_t eye = y / pt.tile_h, ty = y - eye * pt.tile_h, other = pt.eye_count > 1 ? 1 - eye : 0;
        for (uint32_t x = 0; x < pt.tile_w; ++x)
          pt_path_pixel(&scene, &shading, &settings, &p, eye ? &right : &left, eye ? &left : &right, eye, x, ty,
                        &primaries[eye * n], &primaries[other * n], &own[eye * n + size_t(ty) * pt.tile_w + x],
                        reproj.data() + 4 * other * n);
        rows_done.fetch_add(1);
      }
      sync.arrive_and_wait();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return rows_done.load();
}

}  // namespace tessera::cpu
