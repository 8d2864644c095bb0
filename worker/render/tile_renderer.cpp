#include "worker/render/tile_renderer.h"

#include "worker/render/host_tile_renderer.h"
#include "worker/render/opencl_tile_renderer.h"

namespace tessera {

std::unique_ptr<TileRenderer> make_tile_renderer(const PackedScene& scene, const RendererOptions& options) {
  if (options.device == "host") return std::make_unique<HostTileRenderer>(scene, options.host_threads);
  return std::make_unique<OpenClTileRenderer>(scene, options.device, options.gpu_memory_limit);
}

}  // namespace tessera
