#include "worker/daemon/mode_renderers.h"

#include <algorithm>
#include <cstdio>

#include "common/base/error.h"
#include "common/net/log.h"
#include "worker/daemon/worker_session.h"  // peer_caused_log

namespace tessera::worker {

namespace {

// --device null (null_tile_renderer.h) answers raytrace frames alone.
void refuse_on_null_device(const RendererOptions& device, const char* mode) {
  if (device.device == "null")
    throw Error(std::string(mode) + " frames need a real device: this worker runs --device null (raytrace frames only)");
}

}  // namespace

PathTraceRenderer& pathtrace_renderer(LoadedScene& scene, const PathTraceRendererOptions& options) {
  refuse_on_null_device(options.device, "pathtrace");
  if (!scene.pathtrace) {
    PathTraceRendererOptions in_profile = options;  // the scene's scene-memory profile
    in_profile.device.scene_memory = scene.memory;
    scene.pathtrace = std::make_unique<PathTraceRenderer>(scene.scene, in_profile);
    if (scene.motion) scene.pathtrace->place_instances(scene.motion->top_level());  // the instant posed so far
    net::log_info("scene " + scene.name + ": path tracer on " + scene.pathtrace->description());
  }
  return *scene.pathtrace;
}

VctGridSlot& vct_grid(LoadedScene& scene, const RendererOptions& device, const VctOptions& options) {
  refuse_on_null_device(device, "vct");
  const auto same = [&](const VctGridSlot& s) { return s.options.grid == options.grid && s.options.solid == options.solid; };
  auto it = std::find_if(scene.vct.begin(), scene.vct.end(), same);
  if (it != scene.vct.end()) {
    std::rotate(it, it + 1, scene.vct.end());  // most recently used last
    return scene.vct.back();
  }
  // Free the least recently used grid before the device has to hold another one.
  while (scene.vct.size() >= kMaxVctGrids) scene.vct.erase(scene.vct.begin());
  VctGridSlot slot;
  slot.options = options;
  slot.scene_lights = vct_lights_for_scene(scene.scene);
  RendererOptions in_profile = device;  // the scene's scene-memory profile
  in_profile.scene_memory = scene.memory;
  slot.renderer = make_vct_renderer(scene.scene, in_profile, options, slot.scene_lights);
  const VctStepTimes& t = slot.renderer->build_times();
  char text[160];
  std::snprintf(text, sizeof text, ": voxelized at %u^3%s in %.1f ms (mip levels %.1f ms), %.1f MB", options.grid,
                options.solid ? " (filled)" : "", t.voxelize_ms(), t.mips_ms, double(slot.renderer->grid_stats().total_bytes()) / 1e6);
  net::log_info("scene " + scene.name + text);
  if (const std::string warning = vct_specular_warning(scene.scene); !warning.empty())
    net::log_warning("scene " + scene.name + ": " + warning.substr(std::string("warning: ").size()));
  scene.vct.push_back(std::move(slot));
  return scene.vct.back();
}

void set_vct_lights(VctGridSlot& slot, const std::optional<std::array<float, 3>>& move_to, uint32_t index,
                    const std::optional<SunOverride>& sun) {
  std::vector<VctLight> lights = vct_lights_with_sun(slot.scene_lights, sun);
  if (move_to) {
    if (index >= lights.size())
      throw Error("vct: light " + std::to_string(index) + " does not exist (the scene has " + std::to_string(lights.size()) + ")");
    move_vct_light(lights, index, *move_to);
  }
  const VctStepTimes t = slot.renderer->set_lights(lights);  // relights only when they differ
  if (t.relight_ms() > 0) {
    char text[96];
    std::snprintf(text, sizeof text, "vct grid %u^3 relit in %.1f ms (lights changed, no voxelization)", slot.options.grid,
                  t.relight_ms());
    peer_caused_log().info(text);  // a master moving a light every frame must not flood the log
  }
}

}  // namespace tessera::worker
