#include "worker/render/host_vct_renderer.h"

#include <chrono>
#include <cstring>
#include <thread>

namespace tessera {
namespace {

VctStepTimes from_host(const cpu::VctHostTimes& t) {
  VctStepTimes s;
  s.structure_ms = t.structure_ms;
  s.fill_ms = t.fill_ms;
  s.attributes_ms = t.attributes_ms;
  s.light_ms = t.light_ms;
  s.mips_ms = t.mips_ms;
  return s;
}

bool same_lights(const std::vector<VctLight>& a, const std::vector<VctLight>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(VctLight)) == 0);
}

}  // namespace

HostVctRenderer::HostVctRenderer(const PackedScene& scene, unsigned threads, const VctOptions& options,
                                 std::vector<VctLight> lights, SceneMemory scene_memory)
    : view_(scene.host_view(scene_memory)),
      shading_(ShadingData::build(scene)),
      context_(shading_.host_context()),
      threads_(threads),
      options_(options),
      lights_(std::move(lights)) {
  build_times_ = revoxelize();
  const uint64_t n = options.grid, cells = cpu::vct_total_cells(grid_.params);
  const uint64_t marking = cells * 8 + (options.solid ? 3 * n * n * n / 8 : 0);
  const uint64_t summing = uint64_t(grid_.level_voxels(0)) * TS_VCT_ACCUM_WORDS * 4;
  stats_ = vct_grid_stats(grid_.params, std::max(marking, summing));
}

VctStepTimes HostVctRenderer::revoxelize() {
  cpu::VctHostTimes t;
  grid_ = {};
  grid_ = cpu::vct_build(view_, context_, options_.grid, options_.solid, lights_, threads_, &t);
  return from_host(t);
}

std::string HostVctRenderer::description() const {
  const unsigned n = threads_ ? threads_ : std::max(1u, std::thread::hardware_concurrency());
  return "host (kernels compiled for the CPU, " + std::to_string(n) + " threads)";
}

VctStepTimes HostVctRenderer::set_lights(const std::vector<VctLight>& lights) {
  if (same_lights(lights, lights_)) return {};
  lights_ = lights;
  cpu::VctHostTimes t;
  cpu::vct_relight(grid_, view_, context_, lights_, threads_, &t);
  return from_host(t);
}

void HostVctRenderer::render_tile(const CameraParams& camera, const RenderSettings& settings, const VctFrameSettings& frame,
                                  const TileRect& tile, std::span<uint32_t> out) {
  const auto start = std::chrono::steady_clock::now();
  const VctSettings vs = make_vct_settings(frame, grid_.params, uint32_t(lights_.size()));
  cpu::vct_tile(view_, context_, settings, grid_, vs, lights_, camera, tile, out, threads_);
  last_tile_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tessera
