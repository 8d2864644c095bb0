// The host backend: kernels/ compiled for the CPU (kernels/device/cpu).
#include "worker/render/host_tile_renderer.h"

#include <thread>

#include "common/render/shading_data.h"

namespace tessera {

HostTileRenderer::HostTileRenderer(const PackedScene& scene, unsigned threads)
    : view_(scene.host_view()), shading_(ShadingData::build(scene)), context_(shading_.host_context()), threads_(threads) {}

std::string HostTileRenderer::description() const {
  const unsigned n = threads_ ? threads_ : std::max(1u, std::thread::hardware_concurrency());
  return "host (kernels compiled for the CPU, " + std::to_string(n) + " threads)";
}

void HostTileRenderer::render_raytrace(const CameraParams& camera, const RenderSettings& settings, const TileRect& tile,
                                       std::span<uint32_t> out) {
  cpu::raytrace_tile(view_, context_, settings, camera, tile, out, threads_);
}

}  // namespace tessera
