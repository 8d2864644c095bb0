#include "worker/bench/vct_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "common/base/error.h"
#include "common/base/median.h"
#include "common/base/usage_error.h"
#include "common/cl/memory_size.h"
#include "common/image/metrics.h"
#include "common/image/png_io.h"
#include "common/render/camera_setup.h"
#include "common/render/shading_data.h"
#include "worker/render/vct_renderer.h"

namespace tessera::bench {
namespace {

using nlohmann::json;

CameraParams default_camera(const PackedScene& scene, uint32_t w, uint32_t h) {
  CameraSpec spec;
  spec.pose = pose_from_manifest(scene.manifest().camera());
  spec.vertical_fov_degrees = scene.manifest().camera().vertical_fov_degrees();
  return make_camera(spec, w, h);
}

// Median of `builds` voxelizations from scratch, step by step.
VctStepTimes median_build(VctRenderer& r, int builds) {
  std::vector<double> s, f, a, l, m;
  for (int i = 0; i < builds; ++i) {
    const VctStepTimes t = r.revoxelize();
    s.push_back(t.structure_ms);
    f.push_back(t.fill_ms);
    a.push_back(t.attributes_ms);
    l.push_back(t.light_ms);
    m.push_back(t.mips_ms);
  }
  VctStepTimes t;
  t.structure_ms = median(s);
  t.fill_ms = median(f);
  t.attributes_ms = median(a);
  t.light_ms = median(l);
  t.mips_ms = median(m);
  return t;
}

json times_json(const VctStepTimes& t) {
  return {{"structure_ms", t.structure_ms}, {"fill_ms", t.fill_ms}, {"attributes_ms", t.attributes_ms},
          {"light_ms", t.light_ms},         {"mips_ms", t.mips_ms}, {"voxelize_ms", t.voxelize_ms()}};
}

json memory_json(const VctGridStats& g) {
  const double grid_voxels = double(g.resolution) * g.resolution * g.resolution;
  return {{"voxels_per_level", g.voxels_per_level},
          {"bricks_per_level", g.bricks_per_level},
          {"active_voxels", g.voxels_per_level.empty() ? 0 : g.voxels_per_level[0]},
          {"map_bytes", g.map_bytes},
          {"brick_bytes", g.brick_bytes},
          {"radiance_bytes", g.radiance_bytes},
          {"position_bytes", g.position_bytes},
          {"attribute_bytes", g.attribute_bytes},
          {"dense_bytes", g.dense_bytes},
          {"total_bytes", g.total_bytes()},
          {"trace_bytes", g.trace_bytes()},
          {"transient_peak_bytes", g.transient_peak_bytes},
          {"bytes_per_grid_voxel", double(g.total_bytes()) / grid_voxels},
          {"dense_thesis_bytes", g.dense_thesis_bytes()},
          {"dense_thesis_with_mips_bytes", g.dense_thesis_bytes() * 8 / 7}};
}

struct Tracer {
  VctRenderer& renderer;
  const CameraParams& camera;
  const RenderSettings& settings;
  int passes;
  double primary_ms = 0, shade_ms = 0;  // of the last trace_ms, where the tile ran as two kernels

  // Median device time of a whole frame rendered as one tile.
  double trace_ms(const VctFrameSettings& frame, ImageRgba8* image = nullptr) {
    std::vector<uint32_t> pixels(size_t(camera.width) * camera.height);
    const TileRect all{0, 0, camera.width, camera.height};
    renderer.render_tile(camera, settings, frame, all, pixels);  // warm-up
    std::vector<double> ms, primary, shade;
    for (int i = 0; i < passes; ++i) {
      renderer.render_tile(camera, settings, frame, all, pixels);
      ms.push_back(renderer.last_tile_ms());
      primary.push_back(renderer.last_primary_ms());
      shade.push_back(renderer.last_shade_ms());
    }
    primary_ms = median(primary);
    shade_ms = median(shade);
    if (image) {
      *image = ImageRgba8(int(camera.width), int(camera.height));
      composite_tile(*image, 0, 0, int(camera.width), int(camera.height),
                     {reinterpret_cast<const uint8_t*>(pixels.data()), pixels.size() * 4});
    }
    return median(ms);
  }
};

VctFrameSettings preset_settings(int preset, float angle = kVctDefaultShadowConeDegrees) {
  VctFrameSettings f;
  f.preset = preset;
  f.shadow_cone_degrees = angle;
  return f;
}

// Mean |a - b| of two linear-grey AO images (R channel, 0..255 -> 0..1), over all pixels and over the
// pixels the reference finds occluded (AO < 0.85: corners, contact shadows).
json ao_error(const ImageRgba8& vct, const ImageRgba8& reference) {
  double all = 0, contact = 0, contact_vct = 0, contact_ref = 0;
  uint64_t n = 0, nc = 0;
  for (int y = 0; y < vct.height(); ++y)
    for (int x = 0; x < vct.width(); ++x) {
      const double a = vct.at(x, y).r / 255.0, b = reference.at(x, y).r / 255.0;
      all += std::fabs(a - b);
      ++n;
      if (b < 0.85) {
        contact += std::fabs(a - b);
        contact_vct += a;
        contact_ref += b;
        ++nc;
      }
    }
  return {{"mean_abs_error", n ? all / double(n) : 0.0},
          {"occluded_pixels", nc},
          {"occluded_mean_abs_error", nc ? contact / double(nc) : 0.0},
          {"occluded_mean_ao", nc ? contact_vct / double(nc) : 0.0},
          {"occluded_mean_ao_reference", nc ? contact_ref / double(nc) : 0.0}};
}

// Where filling changes the AO at all (|hollow - filled| > 2/255): both against the reference there.
json ao_changed(const ImageRgba8& hollow, const ImageRgba8& solid, const ImageRgba8& reference) {
  double eh = 0, es = 0, ah = 0, as = 0, ar = 0;
  uint64_t n = 0;
  for (int y = 0; y < hollow.height(); ++y)
    for (int x = 0; x < hollow.width(); ++x) {
      const int h = hollow.at(x, y).r, f = solid.at(x, y).r;
      if (std::abs(h - f) <= 2) continue;
      const double r = reference.at(x, y).r / 255.0;
      eh += std::fabs(h / 255.0 - r);
      es += std::fabs(f / 255.0 - r);
      ah += h / 255.0;
      as += f / 255.0;
      ar += r;
      ++n;
    }
  const double k = n ? 1.0 / double(n) : 0.0;
  return {{"pixels", n},
          {"hollow_mean_abs_error", eh * k},
          {"solid_mean_abs_error", es * k},
          {"hollow_mean_ao", ah * k},
          {"solid_mean_ao", as * k},
          {"reference_mean_ao", ar * k}};
}

std::string stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

json bench_scene(const std::string& path, const VctBenchOptions& o, const std::string& reference) {
  const PackedScene scene = PackedScene::load(path);
  const CameraParams camera = default_camera(scene, o.size, o.size);
  const RenderSettings settings = default_render_settings(scene);
  RendererOptions device;
  device.device = o.device;
  auto save = [&](const ImageRgba8& image, const std::string& name) {
    if (!o.image_dir.empty()) write_png(std::filesystem::path(o.image_dir) / (stem(path) + "_" + name + ".png"), image);
  };

  json out{{"scene", std::filesystem::path(path).filename().string()}, {"triangles", scene.triangle_count()}};
  // ---- Tables 5.2 - 5.4 at the main grid ----
  auto main = make_vct_renderer(scene, device, {o.grid, false});
  out["device"] = main->description();
  out["lights"] = main->lights().size();
  const VctStepTimes build = median_build(*main, o.build_passes);
  Tracer tracer{*main, camera, settings, o.passes};
  std::vector<double> preset_ms(6, 0.0);
  json presets = json::array();
  for (int p = 1; p <= 5; ++p) {
    ImageRgba8 image;
    preset_ms[p] = tracer.trace_ms(preset_settings(p), &image);
    save(image, "preset" + std::to_string(p));
    const double voxelize = p >= 3 ? build.voxelize_ms() + build.mips_ms : 0.0;  // presets 1, 2 read no grid
    presets.push_back({{"preset", p},
                       {"name", vct_preset_name(p)},
                       {"trace_ms", preset_ms[p]},
                       {"frame_ms_voxelizing_every_frame", preset_ms[p] + voxelize},
                       {"frame_ms_static_grid", preset_ms[p]}});
  }
  out["table_5_2"] = {{"grid", o.grid}, {"presets", presets}};
  out["table_5_3"] = {{"grid", o.grid},
                      {"preset", 5},
                      {"primary_ms", preset_ms[1]},
                      {"voxelize_ms", build.voxelize_ms()},
                      {"mips_ms", build.mips_ms},
                      {"trace_ms", preset_ms[5]},
                      {"primary_kernel_ms", tracer.primary_ms},  // the kernels of the preset 5 trace
                      {"shade_kernel_ms", tracer.shade_ms},
                      {"total_ms", build.voxelize_ms() + build.mips_ms + preset_ms[5]},
                      {"voxelize_plus_mips_ms", build.voxelize_ms() + build.mips_ms},
                      {"steps", times_json(build)}};
  // Relighting: move the first light back and forth; only direct light and mip levels run.
  if (!main->lights().empty()) {
    const std::vector<VctLight> original = main->lights();
    std::vector<VctLight> moved = original;
    const auto& b = scene.manifest().bounds();
    const float shift = 0.02f * (b.max().x() - b.min().x());
    const VctLight& l0 = original[0];
    if (l0.type == TS_VCT_LIGHT_DIRECTIONAL) move_vct_light(moved, 0, {l0.x + 0.05f, l0.y, l0.z + 0.05f});
    else move_vct_light(moved, 0, {l0.x + shift, l0.y, l0.z});
    std::vector<double> light, mips;
    for (int i = 0; i < o.build_passes; ++i) {
      const VctStepTimes t = main->set_lights(i % 2 == 0 ? moved : original);
      light.push_back(t.light_ms);
      mips.push_back(t.mips_ms);
    }
    main->set_lights(original);
    out["relight"] = {{"light_ms", median(light)}, {"mips_ms", median(mips)}, {"relight_ms", median(light) + median(mips)},
                      {"voxelize_again_ms", build.voxelize_ms() + build.mips_ms}};
  }
  json angles = json::array();
  for (float a : o.angles) {
    ImageRgba8 image;
    angles.push_back({{"degrees", a}, {"trace_ms", tracer.trace_ms(preset_settings(5, a), &image)}});
    char name[32];
    std::snprintf(name, sizeof name, "cone%g", double(a));
    save(image, name);
  }
  out["table_5_4"] = {{"grid", o.grid}, {"preset", 5}, {"angles", angles}};
  const VctGridStats main_stats = main->grid_stats();

  // ---- PSNR / SSIM of the diffuse-GI image against a reference (e.g. a converged path-traced image) ----
  if (!reference.empty()) {
    const ImageRgba8 ref = read_image(reference);
    const CameraParams ref_camera = default_camera(scene, uint32_t(ref.width()), uint32_t(ref.height()));
    Tracer ref_tracer{*main, ref_camera, settings, 1};
    json cmp = json::object();
    for (int p : {4, 5}) {
      ImageRgba8 image;
      ref_tracer.trace_ms(preset_settings(p), &image);
      const ImageComparison c = compare_images(image, ref);
      cmp["preset" + std::to_string(p)] = {{"psnr", c.psnr}, {"ssim", c.ssim}, {"mse", c.mse}};
      save(image, "reference_view_preset" + std::to_string(p));
    }
    out["reference"] = {{"file", reference}, {"width", ref.width()}, {"height", ref.height()}, {"comparison", cmp}};
  }
  main.reset();

  // ---- Table 5.5: grid sizes ----
  json grids = json::array();
  for (uint32_t g : o.grids) {
    auto r = make_vct_renderer(scene, device, {g, false});
    const VctStepTimes t = median_build(*r, o.build_passes);
    Tracer gt{*r, camera, settings, o.passes};
    json trace = json::object();
    for (int p : {3, 4, 5}) {
      ImageRgba8 image;
      trace[std::to_string(p)] = gt.trace_ms(preset_settings(p), &image);
      if (p == 5) save(image, "grid" + std::to_string(g));
    }
    grids.push_back({{"grid", g},
                     {"voxelize_ms", t.voxelize_ms()},
                     {"mips_ms", t.mips_ms},
                     {"steps", times_json(t)},
                     {"trace_ms", trace},
                     {"memory", memory_json(r->grid_stats())}});
  }
  out["table_5_5"] = grids;
  out["memory"] = memory_json(main_stats);

  // ---- Fig. 6.1: hollow vs filled voxelization, cone-traced AO against AO by rays ----
  if (o.solid_compare) {
    VctFrameSettings ao = preset_settings(3);
    ao.output = VctOutput::ao;
    auto hollow = make_vct_renderer(scene, device, {o.grid, false});
    auto solid = make_vct_renderer(scene, device, {o.grid, true});
    const VctStepTimes solid_build = median_build(*solid, std::max(1, o.build_passes - 1));
    ImageRgba8 ao_hollow, ao_solid, ao_reference;
    Tracer th{*hollow, camera, settings, 1}, ts{*solid, camera, settings, 1};
    const double hollow_ms = th.trace_ms(ao, &ao_hollow), solid_ms = ts.trace_ms(ao, &ao_solid);
    VctFrameSettings ref = ao;
    ref.output = VctOutput::ao_reference;
    ref.ao_reference_rays = o.ao_reference_rays;
    ts.trace_ms(ref, &ao_reference);
    save(ao_hollow, "ao_hollow");
    save(ao_solid, "ao_solid");
    save(ao_reference, "ao_reference");
    out["solid_fill"] = {{"grid", o.grid},
                         {"changed", ao_changed(ao_hollow, ao_solid, ao_reference)},
                         {"reference_rays", o.ao_reference_rays},
                         {"ao_distance", make_vct_settings(ao, solid->grid_params(), 0).ao_distance},
                         {"hollow", {{"ao_vs_rays", ao_error(ao_hollow, ao_reference)},
                                     {"ao_trace_ms", hollow_ms},
                                     {"memory", memory_json(hollow->grid_stats())}}},
                         {"solid", {{"ao_vs_rays", ao_error(ao_solid, ao_reference)},
                                    {"ao_trace_ms", solid_ms},
                                    {"fill_ms", solid_build.fill_ms},
                                    {"voxelize_ms", solid_build.voxelize_ms()},
                                    {"mips_ms", solid_build.mips_ms},
                                    {"memory", memory_json(solid->grid_stats())}}}};
  }
  return out;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

}  // namespace

json run_vct_bench(const std::vector<std::string>& scenes, const VctBenchOptions& o) {
  if (o.references.size() > scenes.size()) throw UsageError("more --reference images than scenes");
  validate_vct_grid(o.grid, "--grid");
  for (uint32_t g : o.grids) validate_vct_grid(g, "--grids");
  for (float a : o.angles) validate_shadow_cone(a, "--angles");
  if (!o.image_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.image_dir, ec);
    if (!std::filesystem::is_directory(o.image_dir)) throw Error("--images " + o.image_dir + " is not a folder");
  }
  json all{{"size", o.size}, {"grid", o.grid}, {"passes", o.passes}, {"build_passes", o.build_passes}, {"scenes", json::array()}};
  for (size_t i = 0; i < scenes.size(); ++i)
    all["scenes"].push_back(bench_scene(scenes[i], o, i < o.references.size() ? o.references[i] : std::string()));
  if (!all["scenes"].empty()) all["device"] = all["scenes"][0]["device"];
  return all;
}

std::string format_vct_bench(const json& r) {
  std::string s;
  auto line = [&](const std::string& t) { s += t + "\n"; };
  line("vct on " + r.value("device", std::string("?")) + ", " + std::to_string(r["size"].get<int>()) + "x" +
       std::to_string(r["size"].get<int>()) + ", medians of " + std::to_string(r["passes"].get<int>()) + " traces / " +
       std::to_string(r["build_passes"].get<int>()) + " voxelizations (ms)");
  for (const auto& sc : r["scenes"]) {
    line("");
    line("== " + sc["scene"].get<std::string>() + " (" + std::to_string(sc["triangles"].get<uint64_t>()) + " triangles, " +
         std::to_string(sc["lights"].get<int>()) + " lights)");
    const auto& t2 = sc["table_5_2"];
    line("Table 5.2, grid " + std::to_string(t2["grid"].get<int>()) + ": frame time per preset");
    std::string h = "  ", a = "  voxelizing  ", b = "  static (*)  ";
    h += "            ";
    for (const auto& p : t2["presets"]) {
      h += "   scene " + std::to_string(p["preset"].get<int>());
      a += fmt("%10.2f", p["frame_ms_voxelizing_every_frame"].get<double>());
      b += fmt("%10.2f", p["frame_ms_static_grid"].get<double>());
    }
    line(h);
    line(a);
    line(b);
    const auto& t3 = sc["table_5_3"];
    line("Table 5.3, preset 5: primary " + fmt("%.2f", t3["primary_ms"]) + ", V " + fmt("%.2f", t3["voxelize_ms"]) + " (structure " +
         fmt("%.2f", t3["steps"]["structure_ms"]) + ", attributes " + fmt("%.2f", t3["steps"]["attributes_ms"]) + ", light " +
         fmt("%.2f", t3["steps"]["light_ms"]) + "), M " + fmt("%.2f", t3["mips_ms"]) + ", Tr " + fmt("%.2f", t3["trace_ms"]) +
         (t3.value("primary_kernel_ms", 0.0) > 0
              ? " (primary kernel " + fmt("%.2f", t3["primary_kernel_ms"]) + " + shade " + fmt("%.2f", t3["shade_kernel_ms"]) + ")"
              : std::string()) +
         ", total " + fmt("%.2f", t3["total_ms"]) + "; V + M " + fmt("%.2f", t3["voxelize_plus_mips_ms"]));
    if (sc.contains("relight"))
      line("Relight (light 0 moved): direct light " + fmt("%.2f", sc["relight"]["light_ms"]) + " + mip levels " +
           fmt("%.2f", sc["relight"]["mips_ms"]) + " = " + fmt("%.2f", sc["relight"]["relight_ms"]) + " vs voxelizing again " +
           fmt("%.2f", sc["relight"]["voxelize_again_ms"]));
    std::string angles = "Table 5.4, preset 5 by shadow cone:";
    for (const auto& x : sc["table_5_4"]["angles"])
      angles += " " + fmt("%g", x["degrees"]) + " deg " + fmt("%.2f", x["trace_ms"]) + ";";
    line(angles);
    line("Table 5.5: grid      V        M   Tr(3)   Tr(4)   Tr(5)   active voxels   grid memory (dense 4 B/voxel)");
    for (const auto& g : sc["table_5_5"]) {
      const auto& m = g["memory"];
      line(fmt("  %15.0f", g["grid"]) + fmt(" %8.2f", g["voxelize_ms"]) + fmt(" %8.2f", g["mips_ms"]) +
           fmt(" %7.2f", g["trace_ms"]["3"]) + fmt(" %7.2f", g["trace_ms"]["4"]) + fmt(" %7.2f", g["trace_ms"]["5"]) +
           fmt(" %15.0f", m["active_voxels"]) + "   " + cl::format_memory_size(m["total_bytes"].get<uint64_t>()) + " (" +
           cl::format_memory_size(m["dense_thesis_bytes"].get<uint64_t>()) + "), " + fmt("%.3f", m["bytes_per_grid_voxel"]) +
           " B/voxel");
    }
    if (sc.contains("solid_fill")) {
      const auto& f = sc["solid_fill"];
      line("Fig. 6.1, filled voxelization: AO error vs " + std::to_string(f["reference_rays"].get<int>()) +
           " rays/pixel: hollow " + fmt("%.4f", f["hollow"]["ao_vs_rays"]["mean_abs_error"]) + " (occluded pixels " +
           fmt("%.4f", f["hollow"]["ao_vs_rays"]["occluded_mean_abs_error"]) + ", mean AO there " +
           fmt("%.3f", f["hollow"]["ao_vs_rays"]["occluded_mean_ao"]) + "), filled " +
           fmt("%.4f", f["solid"]["ao_vs_rays"]["mean_abs_error"]) + " (" +
           fmt("%.4f", f["solid"]["ao_vs_rays"]["occluded_mean_abs_error"]) + ", " +
           fmt("%.3f", f["solid"]["ao_vs_rays"]["occluded_mean_ao"]) + "; rays " +
           fmt("%.3f", f["solid"]["ao_vs_rays"]["occluded_mean_ao_reference"]) + "); fill " + fmt("%.2f", f["solid"]["fill_ms"]) +
           " ms, memory " + cl::format_memory_size(f["hollow"]["memory"]["total_bytes"].get<uint64_t>()) + " -> " +
           cl::format_memory_size(f["solid"]["memory"]["total_bytes"].get<uint64_t>()));
      const auto& c = f["changed"];
      line("  where filling changes the AO (" + std::to_string(c["pixels"].get<uint64_t>()) + " pixels): error vs rays hollow " +
           fmt("%.4f", c["hollow_mean_abs_error"]) + " -> filled " + fmt("%.4f", c["solid_mean_abs_error"]) + " (mean AO " +
           fmt("%.3f", c["hollow_mean_ao"]) + " -> " + fmt("%.3f", c["solid_mean_ao"]) + ", rays " +
           fmt("%.3f", c["reference_mean_ao"]) + ")");
    }
    if (sc.contains("reference")) {
      const auto& c = sc["reference"]["comparison"];
      line("Against " + sc["reference"]["file"].get<std::string>() + ": preset 4 PSNR " + fmt("%.2f", c["preset4"]["psnr"]) +
           " dB SSIM " + fmt("%.4f", c["preset4"]["ssim"]) + "; preset 5 PSNR " + fmt("%.2f", c["preset5"]["psnr"]) + " dB SSIM " +
           fmt("%.4f", c["preset5"]["ssim"]));
    }
  }
  return s;
}

}  // namespace tessera::bench
