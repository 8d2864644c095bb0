#include "worker/render/tile_renderer.h"

#include <chrono>
#include <vector>

#include "common/base/error.h"
#include "worker/render/host_tile_renderer.h"
#include "worker/render/null_tile_renderer.h"
#include "worker/render/opencl_tile_renderer.h"

namespace tessera {

namespace {

struct VectorPixels final : HostPixels {
  explicit VectorPixels(size_t count) : storage(count) { pixels = storage; }
  std::vector<uint32_t> storage;
};

}  // namespace

std::shared_ptr<HostPixels> TileRenderer::host_pixels(size_t count) { return std::make_shared<VectorPixels>(count); }

BatchTiming TileRenderer::render_raytrace_batch(const std::array<CameraParams, 2>& cameras, const RenderSettings& settings,
                                                std::span<const BatchTile> tiles, std::span<uint32_t> out,
                                                const StopRequested& stop) {
  const auto start = std::chrono::steady_clock::now();
  for (const BatchTile& tile : tiles) {
    if (stop && stop()) throw RenderCanceled();
    const uint64_t pixels = uint64_t(tile.rect.width) * tile.rect.height;
    if (tile.eye > 1 || tile.offset + pixels > out.size()) throw Error("batch tile outside the batch's output");
    render_raytrace(cameras[tile.eye], settings, tile.rect, out.subspan(tile.offset, pixels));
  }
  return {std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(), 0.0};
}

void require_single_level(const PackedScene& scene, const std::string& what) {
  if (scene.instanced())
    throw Error("the scene places objects by instances (docs/instances.md), which " + what +
                " does not trace (every render mode does; or pack the scene without --instances)");
}

std::unique_ptr<TileRenderer> make_tile_renderer(const PackedScene& scene, const RendererOptions& options) {
  if (options.device == "host") return std::make_unique<HostTileRenderer>(scene, options.host_threads, options.scene_memory);
  if (options.device == "null") return std::make_unique<NullTileRenderer>();
  return std::make_unique<OpenClTileRenderer>(scene, options.device, options.gpu_memory_limit, options.scene_memory);
}

}  // namespace tessera
