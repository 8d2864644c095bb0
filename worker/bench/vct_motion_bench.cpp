#include "worker/bench/vct_motion_bench.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "common/base/error.h"
#include "common/base/median.h"
#include "common/scene/packed_scene.h"
#include "common/scene/scene_motion.h"
#include "worker/render/vct_renderer.h"

namespace tessera::bench {
namespace {

using nlohmann::json;

struct Series {
  std::vector<double> total, structure, attributes, light, mips, region, relit;
  uint32_t incremental_steps = 0;
  void add(const VctUpdateTimes& u) {
    total.push_back(u.total_ms);
    structure.push_back(u.steps.structure_ms + u.steps.fill_ms);
    attributes.push_back(u.steps.attributes_ms);
    light.push_back(u.steps.light_ms);
    mips.push_back(u.steps.mips_ms);
    region.push_back(double(u.region_voxels));
    relit.push_back(double(u.relit_outside));
    incremental_steps += u.incremental ? 1 : 0;
  }
  json to_json() const {
    return {{"median_ms", median(total)},
            {"max_ms", total.empty() ? 0.0 : *std::max_element(total.begin(), total.end())},
            {"structure_ms", median(structure)},
            {"attributes_ms", median(attributes)},
            {"light_ms", median(light)},
            {"mips_ms", median(mips)},
            {"region_voxels", median(region)},
            {"relit_outside", median(relit)},
            {"incremental_steps", incremental_steps}};
  }
};

}  // namespace

json run_vct_motion_bench(const std::string& scene_path, const VctMotionOptions& options) {
  const PackedScene scene = PackedScene::load(scene_path);
  auto motion = SceneMotion::of_scene(scene, scene_path);
  if (!motion) throw Error(scene_path + ": the scene has no instances (pack a glTF with tessera-pack --instances)");
  if (!motion->animated()) throw Error(scene_path + ": nothing in the scene is animated, so nothing moves");
  RendererOptions device;
  device.device = options.device;
  VctOptions vct;
  vct.grid = options.grid;
  auto incremental = make_vct_renderer(scene, device, vct);
  auto full = make_vct_renderer(scene, device, vct);
  incremental->set_update_mode(VctUpdateMode::incremental);
  full->set_update_mode(VctUpdateMode::full);
  Series inc, whole;
  uint32_t moved = 0;
  for (uint32_t step = 0; step <= options.steps; ++step) {  // step 0 warms up
    motion->set_time(double(step + 1) * options.step_seconds);
    const TopLevelBvh& top = motion->top_level();
    const VctUpdateTimes a = incremental->place_instances(top);
    const VctUpdateTimes b = full->place_instances(top);
    if (step == 0) continue;
    inc.add(a);
    whole.add(b);
    moved = std::max(moved, a.moved);
  }
  const double inc_ms = median(inc.total), full_ms = median(whole.total);
  const VctGridStats& g = full->grid_stats();
  return {{"scene", scene_path},
          {"device", full->description()},
          {"grid", options.grid},
          {"steps", options.steps},
          {"step_seconds", options.step_seconds},
          {"instances", motion->instance_count()},
          {"moved_instances", moved},
          {"active_voxels", g.voxels_per_level.empty() ? 0 : g.voxels_per_level[0]},
          {"incremental", inc.to_json()},
          {"full", whole.to_json()},
          {"speedup", inc_ms > 0 ? full_ms / inc_ms : 0.0},
          {"grids_equal", cpu::vct_equal_voxels(incremental->read_grid(), full->read_grid())}};
}

std::string format_vct_motion_bench(const json& r) {
  char text[1024];
  const json &i = r["incremental"], &f = r["full"];
  std::snprintf(text, sizeof text,
                "%s: vct grid %u^3 on %s, %u steps of %.4f s, %u of %u instances moving, %llu active voxels\n"
                "update       median ms   max ms  structure  attributes   light    mips   region voxels  relit outside\n"
                "incremental  %9.2f %8.2f %10.2f %11.2f %7.2f %7.2f %15.0f %14.0f   (%u steps incremental)\n"
                "full         %9.2f %8.2f %10.2f %11.2f %7.2f %7.2f\n"
                "speedup %.1fx; grids equal: %s\n",
                r["scene"].get<std::string>().c_str(), r["grid"].get<uint32_t>(), r["device"].get<std::string>().c_str(),
                r["steps"].get<uint32_t>(), r["step_seconds"].get<double>(), r["moved_instances"].get<uint32_t>(),
                r["instances"].get<uint32_t>(), (unsigned long long)r["active_voxels"].get<uint64_t>(), i["median_ms"].get<double>(),
                i["max_ms"].get<double>(), i["structure_ms"].get<double>(), i["attributes_ms"].get<double>(),
                i["light_ms"].get<double>(), i["mips_ms"].get<double>(), i["region_voxels"].get<double>(),
                i["relit_outside"].get<double>(), i["incremental_steps"].get<uint32_t>(), f["median_ms"].get<double>(),
                f["max_ms"].get<double>(), f["structure_ms"].get<double>(), f["attributes_ms"].get<double>(),
                f["light_ms"].get<double>(), f["mips_ms"].get<double>(), r["speedup"].get<double>(),
                r["grids_equal"].get<bool>() ? "yes" : "NO");
  return text;
}

}  // namespace tessera::bench
