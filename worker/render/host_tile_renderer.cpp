// The host backend: kernels/ compiled for the CPU (kernels/device/cpu).
#include "worker/render/host_tile_renderer.h"

#include <chrono>
#include <thread>

#include "common/base/error.h"
#include "common/render/shading_data.h"
#include "common/scene/scene_motion.h"

namespace tessera {

HostTileRenderer::HostTileRenderer(const PackedScene& scene, unsigned threads, SceneMemory memory)
    : view_(scene.host_view(memory)),
      shading_(ShadingData::build(scene)),
      context_(shading_.host_context()),
      scene_lights_(shading_.lights),
      threads_(threads) {
  if (scene.instanced()) {  // placed as packed (time 0) until told otherwise
    instances_.emplace(scene, shading_);
    place_instances(SceneMotion::of_scene(scene, "scene")->top_level());
  }
}

void HostTileRenderer::place_instances(const TopLevelBvh& top) {
  if (!instances_) return;
  instances_->place(top, view_, shading_);  // the top level, and the emitters where it puts them
  context_ = shading_.host_context();
}

void HostTileRenderer::set_sun(const std::optional<SunOverride>& sun) {
  if (sun == sun_) return;
  sun_ = sun;
  shading_.lights = lights_with_sun(scene_lights_, sun);
  context_ = shading_.host_context();
}

std::string HostTileRenderer::description() const {
  const unsigned n = threads_ ? threads_ : std::max(1u, std::thread::hardware_concurrency());
  return "host (kernels compiled for the CPU, " + std::to_string(n) + " threads)";
}

void HostTileRenderer::render_raytrace(const CameraParams& camera, const RenderSettings& settings, const TileRect& tile,
                                       std::span<uint32_t> out) {
  cpu::raytrace_tile(view_, context_, settings, camera, tile, out, threads_);
}

BatchTiming HostTileRenderer::render_aux_batch(const std::array<CameraParams, 2>& cameras, const RenderSettings& settings,
                                               const AuxSettings& aux, std::span<const BatchTile> tiles,
                                               std::span<uint32_t> out, const StopRequested& stop) {
  const auto start = std::chrono::steady_clock::now();
  for (const BatchTile& tile : tiles) {
    if (stop && stop()) throw RenderCanceled();
    const uint64_t pixels = uint64_t(tile.rect.width) * tile.rect.height;
    if (tile.eye > 1 || tile.offset + pixels > out.size()) throw Error("batch tile outside the batch's output");
    cpu::primary_aux_tile(view_, context_, settings, aux, cameras[tile.eye], tile.rect, out.subspan(tile.offset, pixels),
                          threads_);
  }
  return {std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(), 0.0};
}

}  // namespace tessera
