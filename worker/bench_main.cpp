// tessera-bench: kernel benchmarks that print medians (never run as tests).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/base/frame_memory.h"
#include "common/base/cli.h"
#include "common/base/error.h"
#include "common/base/temporary_files.h"
#include "common/base/file_io.h"
#include "worker/bench/pathtrace_bench.h"
#include "worker/bench/ray_bench.h"
#include "worker/bench/instance_bench.h"
#include "worker/bench/motion_bench.h"
#include "worker/bench/seal_bench.h"
#include "worker/bench/vct_bench.h"
#include "worker/bench/vct_motion_bench.h"
#include "worker/render/render_environment.h"

int main(int argc, char** argv) {
  tessera::keep_frame_buffers_resident();
  using namespace tessera;
  CLI::App app{"tessera-bench: benchmarks of the rendering kernels; every figure is the median of the timed passes.",
               "tessera-bench"};
  app.require_subcommand(1);
  CLI::App* rays = app.add_subcommand(
      "rays",
      "Primary, shadow and one-bounce diffuse rays for the scene's default camera, traced by the OpenCL kernels\n"
      "(device time from profiling events). Give several .tpk files (e.g. the same scene packed with --quantize none\n"
      "or --kdtree standard) to see what compactness costs. Where Embree is built in, it traces the very same rays on\n"
      "all CPU cores (rtcIntersect1/rtcOccluded1) as a peer column. On CPUs (an OpenCL CPU device, or --device host)\n"
      "primary and shadow rays travel as packets of 2 x 4 pixels (2 x 2 on the host), one ray per SIMD lane, with the\n"
      "same hits; diffuse bounces as single rays.");
  std::vector<std::string> scenes;
  bench::RayBenchOptions options;
  bool json = false, no_embree = false;
  rays->add_option("scenes", scenes, "Packed scenes (.tpk)")->required();
  rays->add_option("--device", options.device, "auto | gpu | cpu | <index> (OpenCL) | host (kernels compiled for this CPU)")->capture_default_str();
  rays->add_option("--size", options.size, "Square image size in pixels")->capture_default_str()->check(CLI::Range(16u, 8192u));
  rays->add_option("--passes", options.passes, "Timed passes after the warm-up")->capture_default_str()->check(CLI::Range(5, 1000));
  std::string local = "8x8";
  rays->add_option("--local", local, "OpenCL work-group shape WxH")->capture_default_str();
  rays->add_option("--schedule", options.schedule,
                   "grid: one work item per pixel in one launch; persistent: persistent work-groups that take blocks of\n"
                   "pixels from a global counter (Aila and Laine 2009); longest-first: the grid's work-groups, each timed\n"
                   "pass in the order of what they cost in the pass before, costliest first (the warm-up in grid order):\n"
                   "a bound on what the end of a launch costs, as the very rays' own costs order it")
      ->capture_default_str()->check(CLI::IsMember({"grid", "persistent", "longest-first"}));
  float costs_from_yaw = 0;
  auto* costs_from_yaw_option =
      rays->add_option("--costs-from-yaw", costs_from_yaw,
                       "With --schedule longest-first: take the group costs from one pass of the view turned this many\n"
                       "degrees about the vertical axis (a head turned since the last frame) and keep that order for every\n"
                       "timed pass")
          ->check(CLI::Range(-90.0f, 90.0f));
  rays->add_option("--cost-map", options.cost_map,
                   "With --schedule longest-first: PNG pictures of what each work-group cost in the last timed pass,\n"
                   "PREFIX-SCENE-primary.png, -shadow.png, -diffuse.png (black, red, yellow, white for the costliest)");
  rays->add_option("--persistent-groups", options.persistent_groups_per_unit, "Persistent work-groups per compute unit")
      ->capture_default_str()->check(CLI::Range(1u, 1024u));
  rays->add_option("--diffuse-order", options.diffuse_order,
                   "pixel: diffuse bounces traced as generated; octant: each work-group of --sort-group pixels sorts its\n"
                   "bounces by direction octant first (in the timed kernel; grid schedule only)")
      ->capture_default_str()->check(CLI::IsMember({"pixel", "octant"}));
  rays->add_option("--rays", options.rays,
                   "generated: each work item makes its pixel's ray in the timed kernel; stored: an untimed kernel writes\n"
                   "the rays to device memory first and the timed kernel only reads and traces them, as other tracers'\n"
                   "batch kernels do (OpenCL devices, grid schedule, pixel order; the same rays and hits)")
      ->capture_default_str()->check(CLI::IsMember({"generated", "stored"}));
  rays->add_option("--shadow-rays", options.shadow_rays,
                   "all: a shadow ray from every primary hit; facing: only where the surface faces the light, the rays\n"
                   "the renderers cast (a light behind a surface lights nothing)")
      ->capture_default_str()->check(CLI::IsMember({"all", "facing"}));
  std::string sort_group = "16x16";
  rays->add_option("--sort-group", sort_group, "Work-group shape WxH of --diffuse-order octant (at most 256 work items)")
      ->capture_default_str();
  rays->add_option("--embree-threads", options.embree_threads, "Threads for the Embree peer (0: all cores)");
  rays->add_flag("--no-embree", no_embree, "Skip the Embree peer column");
  rays->add_flag("--stats", options.stats,
                 "Also count per ray, on the host, the nodes, leaves and triangles the traversal visits, its stack pushes\n"
                 "and pops, and how evenly 8 x 4 pixel warps share the work (the same traversal GPUs run)");
  std::string scene_memory = "fast";
  rays->add_option("--scene-memory", scene_memory,
                   "How the scene lies in device memory: fast (decoded vertices, the small-leaf tree) or compact (12-byte\n"
                   "vertices decoded in the triangle test, the .tpk's compact tree; docs/scene-memory.md)")
      ->capture_default_str()->check(CLI::IsMember({"fast", "compact"}));
  rays->add_flag("--json", json, "Print one JSON object per scene (a JSON array)");
  CLI::App* vct = app.add_subcommand(
      "vct",
      "Voxel cone tracing (papers/001): per-step times of Tables 5.2 - 5.5 (voxelize, mip levels, trace) at 400x400,\n"
      "soft-shadow cone angles, grids 64 - 512, relighting, grid memory, hollow vs filled voxelization (Fig. 6.1),\n"
      "and PSNR / SSIM against reference images, for every scene in one run.");
  std::vector<std::string> vct_scenes;
  bench::VctBenchOptions vct_options;
  bool vct_json = false, no_solid = false;
  vct->add_option("scenes", vct_scenes, "Packed scenes (.tpk), e.g. the Cornell box and Crytek Sponza")->required();
  vct->add_option("--device", vct_options.device, "auto | gpu | cpu | <index> | host")->capture_default_str();
  vct->add_option("--size", vct_options.size, "Square frame size in pixels")->capture_default_str()->check(CLI::Range(16u, 8192u));
  vct->add_option("--grid", vct_options.grid, "Grid of Tables 5.2 - 5.4")->capture_default_str();
  vct->add_option("--grids", vct_options.grids, "Grids of Table 5.5")->delimiter(',')->capture_default_str();
  vct->add_option("--angles", vct_options.angles, "Shadow cone angles of Table 5.4, degrees")->delimiter(',')->capture_default_str();
  vct->add_option("--passes", vct_options.passes, "Timed traces after a warm-up")->capture_default_str()->check(CLI::Range(1, 1000));
  vct->add_option("--build-passes", vct_options.build_passes, "Timed voxelizations after the first")
      ->capture_default_str()->check(CLI::Range(1, 100));
  vct->add_option("--reference", vct_options.references,
                  "Reference PNG of the scene's default view (one per scene, in order), e.g. a converged path-traced image");
  vct->add_option("--ao-rays", vct_options.ao_reference_rays, "Rays per pixel of the AO reference (Fig. 6.1)")
      ->capture_default_str()->check(CLI::Range(1u, 65536u));
  vct->add_flag("--no-solid-compare", no_solid, "Skip the hollow vs filled voxelization comparison");
  vct->add_option("--images", vct_options.image_dir, "Write the rendered images (presets, angles, grids, AO) to this folder");
  vct->add_flag("--json", vct_json, "Print the results as one JSON object");
  std::string vct_json_out;
  vct->add_option("--json-out", vct_json_out, "Also write the JSON object to this file (the tables still print)");
  bench::VctMotionOptions vct_motion;
  vct->add_option("--motion", vct_motion.step_seconds,
                  "Instead of the tables: follow an instanced scene's animation, DT scene seconds a step, and time the grid's\n"
                  "update of what moved against voxelizing it all again (medians of both, and whether the grids agree)")
      ->check(CLI::Range(1e-6, 3600.0));
  vct->add_option("--motion-steps", vct_motion.steps, "--motion: timed steps (after one warm-up)")
      ->capture_default_str()->check(CLI::Range(1u, 100000u));
  bench::PathTraceCommand pathtrace(app);
  bench::SealCommand seal(app);
  bench::InstanceCommand instances(app);
  bench::MotionCommand motion(app);
  if (const auto done = cli::parse(app, argc, argv)) return *done;
  tessera::remove_temporary_files_on_signal();
  try {
    check_render_environment();  // a bad TESSERA_* render switch is refused at start
    if (pathtrace.parsed()) return pathtrace.run();
    if (seal.parsed()) return seal.run();
    if (instances.parsed()) return instances.run();
    if (motion.parsed()) return motion.run();
    if (vct->parsed()) {
      if (!vct_json_out.empty()) refuse_non_regular_output(vct_json_out);  // before the work, not after it
      vct_options.solid_compare = !no_solid;
      if (vct->count("--motion") > 0) {
        if (vct_scenes.size() != 1) throw UsageError("--motion takes one scene");
        vct_motion.device = vct_options.device;
        vct_motion.grid = vct_options.grid;
        const nlohmann::json result = bench::run_vct_motion_bench(vct_scenes.front(), vct_motion);
        std::cout << (vct_json ? result.dump(2) : bench::format_vct_motion_bench(result)) << std::endl;
        return 0;
      }
      const nlohmann::json result = bench::run_vct_bench(vct_scenes, vct_options);
      if (!vct_json_out.empty()) {  // atomically: a failure leaves no half-written output, a special file stays
        const std::string text = result.dump(2) + "\n";
        write_file_atomically(vct_json_out, text.data(), text.size());
      }
      std::cout << (vct_json ? result.dump(2) : bench::format_vct_bench(result)) << std::endl;
      return 0;
    }
    options.embree = !no_embree;
    options.scene_memory = *parse_scene_memory(scene_memory);
    char x = 0, extra = 0;
    if (std::sscanf(local.c_str(), "%u%c%u%c", &options.local_x, &x, &options.local_y, &extra) != 3 || x != 'x' ||
        options.local_x == 0 || options.local_y == 0 || options.local_x * options.local_y > 1024)
      throw UsageError("bad --local '" + local + "' (expected WxH such as 8x8, at most 1024 work-items)");
    if (std::sscanf(sort_group.c_str(), "%u%c%u%c", &options.sort_local_x, &x, &options.sort_local_y, &extra) != 3 ||
        x != 'x' || options.sort_local_x == 0 || options.sort_local_y == 0 || options.sort_local_x * options.sort_local_y > 256)
      throw UsageError("bad --sort-group '" + sort_group + "' (expected WxH such as 16x16, at most 256 work-items)");
    if (options.diffuse_order == "octant" && options.schedule != "grid")
      throw UsageError("--diffuse-order octant works with --schedule grid only");
    if (!options.cost_map.empty()) {
      if (options.schedule != "longest-first" || options.device == "host")
        throw UsageError("--cost-map needs an OpenCL device and --schedule longest-first");
      // before the work, not after it
      const std::filesystem::path folder = std::filesystem::path(options.cost_map).parent_path();
      if (!folder.empty() && !std::filesystem::is_directory(folder))
        throw UsageError("--cost-map: no folder '" + folder.string() + "' to write the pictures in");
      for (const auto& scene : scenes)
        for (const char* kind : {"primary", "shadow", "diffuse"})
          refuse_non_regular_output(bench::cost_map_path(options, scene, kind));
    }
    if (*costs_from_yaw_option) {
      if (options.schedule != "longest-first" || options.device == "host")
        throw UsageError("--costs-from-yaw needs an OpenCL device and --schedule longest-first");
      options.costs_from_yaw_degrees = costs_from_yaw;
    }
    if (options.rays == "stored" && (options.device == "host" || options.schedule != "grid" || options.diffuse_order != "pixel"))
      throw UsageError("--rays stored needs an OpenCL device, --schedule grid and --diffuse-order pixel");
    nlohmann::json all = nlohmann::json::array();
    for (const auto& scene : scenes) {
      const auto r = bench::run_ray_bench(scene, options);
      if (json) {
        all.push_back(bench::to_json(r));
        continue;
      }
      std::printf("%s (%s) on %s, %ux%u, median of %d passes\n", r.scene.c_str(), r.configuration.c_str(), r.device.c_str(),
                  options.size, options.size, options.passes);
      std::printf("  %-8s %10s %10s %12s %17s", "rays", "count", "ms", "Mrays/s", "hits XXH64");
      if (!r.embree.empty()) std::printf(" %14s %8s", "Embree Mrays/s", "ratio");
      std::printf("\n");
      for (size_t i = 0; i < r.kinds.size(); ++i) {
        const auto& k = r.kinds[i];
        std::printf("  %-8s %10llu %10.2f %12.1f %17s", k.kind.c_str(), (unsigned long long)k.rays, k.median_ms, k.mrays_per_second(),
                    k.hits_hash.c_str());
        if (i < r.embree.size())
          std::printf(" %14.1f %8.2f", r.embree[i].mrays_per_second(), k.mrays_per_second() / r.embree[i].mrays_per_second());
        std::printf("\n");
      }
      if (!r.embree_note.empty()) std::printf("  Embree: %s\n", r.embree_note.c_str());
      for (const auto& path : r.cost_maps) std::printf("  cost map: %s\n", path.c_str());
      if (!r.stats.empty()) std::printf("%s", bench::format_traversal_stats(r.stats).c_str());
    }
    if (json) std::cout << all.dump(2) << std::endl;
    return 0;
  } catch (const std::exception& e) {
    return cli::fail(app, e);
  }
}
