#include "worker/render/vct_frame.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common/base/progress.h"
#include "common/cl/memory_size.h"
#include "common/image/png_io.h"
#include "worker/render/aa_frame.h"

namespace tessera {
namespace {

nlohmann::json times_json(const VctStepTimes& t) {
  return {{"structure_ms", t.structure_ms}, {"fill_ms", t.fill_ms},   {"attributes_ms", t.attributes_ms},
          {"light_ms", t.light_ms},         {"mips_ms", t.mips_ms},   {"voxelize_ms", t.voxelize_ms()}};
}

}  // namespace

int render_vct(const PackedScene& scene, const std::vector<CameraParams>& eyes, const RenderSettings& settings,
               const RendererOptions& device, const VctRenderRequest& request, const std::string& output, bool json) {
  validate_vct_grid(request.options.grid);
  validate_vct_preset(request.frame.preset);
  validate_shadow_cone(request.frame.shadow_cone_degrees);
  if (const std::string warning = vct_specular_warning(scene); !warning.empty()) std::fprintf(stderr, "%s\n", warning.c_str());
  const auto start = std::chrono::steady_clock::now();
  auto renderer = make_vct_renderer(scene, device, request.options,
                                    request.sun ? std::optional(vct_lights_with_sun(vct_lights_for_scene(scene), request.sun))
                                                : std::nullopt);
  // Built as packed, then moved where asked, as a worker's grid follows a frame's instant.
  if (request.top) renderer->place_instances(*request.top);
  VctStepTimes relight;
  if (request.move_light) {
    std::vector<VctLight> lights = renderer->lights();
    move_vct_light(lights, request.light_index, *request.move_light);
    relight = renderer->set_lights(lights);
  }
  ProgressBar bar("vct");
  double trace_ms = 0;
  const size_t passes = eyes.size() * request.aa_samples;
  size_t pass = 0;
  const ImageRgba8 frame = render_aa_frame(eyes, request.aa_samples, [&](const CameraParams& camera) {
    ImageRgba8 image = render_vct_frame(*renderer, camera, settings, request.frame, request.tile_size, [&](size_t done, size_t total) {
      trace_ms += renderer->last_tile_ms();
      bar.update((double(pass) + double(done) / double(total)) / double(passes),
                 std::to_string(pass * total + done) + "/" + std::to_string(passes * total) + " tiles");
    });
    ++pass;
    return image;
  });
  bar.finish();
  const CameraParams& camera = eyes.front();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  write_png(output, frame);
  const VctGridStats& g = renderer->grid_stats();
  const VctStepTimes& b = renderer->build_times();
  if (json) {
    nlohmann::json j{{"output", output},
                     {"device", renderer->description()},
                     {"width", camera.width},
                     {"height", camera.height},
                     {"eyes", eyes.size()},
                     {"aa_samples", request.aa_samples},
                     {"mode", "vct"},
                     {"preset", request.frame.preset},
                     {"preset_name", vct_preset_name(request.frame.preset)},
                     {"vct_output", vct_output_name(request.frame.output)},
                     {"shadow_cone_degrees", request.frame.shadow_cone_degrees},
                     {"grid", g.resolution},
                     {"solid", request.options.solid},
                     {"lights", renderer->lights().size()},
                     {"total_ms", ms},
                     {"build", times_json(b)},
                     {"trace_ms", trace_ms},
                     {"voxels_per_level", g.voxels_per_level},
                     {"bricks_per_level", g.bricks_per_level},
                     {"grid_bytes", g.total_bytes()},
                     {"grid_trace_bytes", g.trace_bytes()},
                     {"grid_transient_peak_bytes", g.transient_peak_bytes},
                     {"dense_thesis_bytes", g.dense_thesis_bytes()}};
    if (request.move_light) j["relight"] = times_json(relight);
    std::cout << j.dump(2) << std::endl;
  } else {
    std::printf("%s: %ux%u%s vct preset %d (%s)%s in %.1f ms on %s\n", output.c_str(), camera.width, camera.height,
                eyes.size() == 2 ? " x 2 eyes" : "", request.frame.preset, vct_preset_name(request.frame.preset),
                request.aa_samples > 1 ? (", " + std::to_string(request.aa_samples) + " AA samples").c_str() : "", ms,
                renderer->description().c_str());
    std::printf("  grid %u^3%s: %llu active voxels, %s (dense 4 B/voxel: %s); voxelize %.1f ms, mip levels %.1f ms, trace %.1f ms\n",
                g.resolution, request.options.solid ? " filled" : "", (unsigned long long)g.voxels_per_level[0],
                cl::format_memory_size(g.total_bytes()).c_str(), cl::format_memory_size(g.dense_thesis_bytes()).c_str(),
                b.voxelize_ms(), b.mips_ms, trace_ms);
    if (request.move_light)
      std::printf("  light %zu moved: relit in %.1f ms (direct light %.1f ms + mip levels %.1f ms), no voxelization\n",
                  request.light_index, relight.relight_ms(), relight.light_ms, relight.mips_ms);
  }
  return 0;
}

}  // namespace tessera
