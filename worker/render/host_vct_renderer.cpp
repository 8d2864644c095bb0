#include "worker/render/host_vct_renderer.h"

#include <chrono>
#include <cstring>
#include <thread>

#include "common/scene/scene_motion.h"
#include "common/scene/scene_objects.h"
#include "common/scene/top_level_view.h"
#include "worker/render/vct_instances.h"

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
    : scene_(scene),
      view_(scene.host_view(scene_memory)),
      shading_(ShadingData::build(scene)),
      context_(shading_.host_context()),
      threads_(threads),
      options_(options),
      lights_(std::move(lights)) {
  const Aabb bounds = vct_grid_bounds(scene);
  geometry_ = cpu::vct_grid_geometry(bounds.min.data(), bounds.max.data(), options.grid);
  if (scene.instanced()) {  // placed as packed (time 0) until told otherwise
    object_words_ = object_words(scene.objects());
    top_ = SceneMotion::of_scene(scene, "scene")->top_level();
    view_top_level(view_, top_, object_words_);
    spans_ = vct_spans(scene, top_);
    blocks_ = vct_triangle_blocks(scene);
  }
  build_times_ = revoxelize();
  const uint64_t n = options.grid, cells = cpu::vct_total_cells(grid_.params);
  const uint64_t marking = cells * 8 + (options.solid ? 3 * n * n * n / 8 : 0);
  const uint64_t summing = uint64_t(grid_.level_voxels(0)) * TS_VCT_ACCUM_WORDS * 4;
  stats_ = vct_grid_stats(grid_.params, std::max(marking, summing));
}

VctStepTimes HostVctRenderer::revoxelize() {
  cpu::VctHostTimes t;
  grid_ = {};
  // An instanced grid keeps its brick masks for incremental updates (not a filled one: see vct_update_cpu.h).
  const bool keep_masks = scene_.instanced() && !options_.solid;
  grid_ = cpu::vct_build(view_, context_, geometry_, options_.solid, lights_, spans_, threads_, &t, keep_masks);
  return from_host(t);
}

VctUpdateTimes HostVctRenderer::place_instances(const TopLevelBvh& top) {
  VctUpdateTimes u;
  if (!scene_.instanced() || top.instances == top_.instances) return u;
  const auto start = std::chrono::steady_clock::now();
  const VctUpdatePlan plan = vct_plan_update(scene_, grid_.params, top_, top, &blocks_);
  top_ = top;
  view_top_level(view_, top_, object_words_);
  spans_ = vct_spans(scene_, top_);
  u.moved = plan.moved;
  if (plan.moved == 0) return u;  // the same transforms in another order
  if (update_mode_ == VctUpdateMode::full || options_.solid || plan.whole_grid) {
    u.steps = revoxelize();
  } else {
    cpu::VctHostTimes t;
    cpu::VctUpdateCounts counts;
    cpu::vct_update_region(grid_, view_, context_, plan.regions, plan.changed, lights_, threads_, &t, &counts);
    u.incremental = true;
    u.steps = from_host(t);
    u.region_voxels = counts.region_voxels;
    u.relit_outside = counts.shadow_tested;
  }
  stats_ = vct_grid_stats(grid_.params, stats_.transient_peak_bytes);
  u.total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return u;
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
