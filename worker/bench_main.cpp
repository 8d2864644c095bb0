// tessera-bench: kernel benchmarks that print medians (never run as tests).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "common/base/error.h"
#include "worker/bench/ray_bench.h"

int main(int argc, char** argv) {
  using namespace tessera;
  CLI::App app{"tessera-bench: benchmarks of the rendering kernels; every figure is the median of the timed passes.",
               "tessera-bench"};
  app.require_subcommand(1);
  CLI::App* rays = app.add_subcommand(
      "rays",
      "Primary, shadow and one-bounce diffuse rays for the scene's default camera, traced by the OpenCL kernels\n"
      "(device time from profiling events). Give several .tpk files (e.g. the same scene packed with --quantize none\n"
      "or --kdtree standard) to see what compactness costs. Where Embree is built in, it traces the very same rays on\n"
      "all CPU cores (rtcIntersect1/rtcOccluded1) as a peer column.");
  std::vector<std::string> scenes;
  bench::RayBenchOptions options;
  bool json = false, no_embree = false;
  rays->add_option("scenes", scenes, "Packed scenes (.tpk)")->required();
  rays->add_option("--device", options.device, "auto | gpu | cpu | <index>")->capture_default_str();
  rays->add_option("--size", options.size, "Square image size in pixels")->capture_default_str()->check(CLI::Range(16u, 8192u));
  rays->add_option("--passes", options.passes, "Timed passes after the warm-up")->capture_default_str()->check(CLI::Range(5, 1000));
  std::string local = "8x8";
  rays->add_option("--local", local, "OpenCL work-group shape WxH")->capture_default_str();
  rays->add_option("--embree-threads", options.embree_threads, "Threads for the Embree peer (0: all cores)");
  rays->add_flag("--no-embree", no_embree, "Skip the Embree peer column");
  rays->add_flag("--json", json, "Print one JSON object per scene (a JSON array)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "tessera-bench: error: %s (see --help)\n", e.what());
    return 2;
  }
  try {
    options.embree = !no_embree;
    char x = 0, extra = 0;
    if (std::sscanf(local.c_str(), "%u%c%u%c", &options.local_x, &x, &options.local_y, &extra) != 3 || x != 'x' ||
        options.local_x == 0 || options.local_y == 0 || options.local_x * options.local_y > 1024)
      throw Error("bad --local '" + local + "' (expected WxH such as 8x8, at most 1024 work-items)");
    nlohmann::json all = nlohmann::json::array();
    for (const auto& scene : scenes) {
      const auto r = bench::run_ray_bench(scene, options);
      if (json) {
        all.push_back(bench::to_json(r));
        continue;
      }
      std::printf("%s (%s) on %s, %ux%u, median of %d passes\n", r.scene.c_str(), r.configuration.c_str(), r.device.c_str(),
                  options.size, options.size, options.passes);
      std::printf("  %-8s %10s %10s %12s", "rays", "count", "ms", "Mrays/s");
      if (!r.embree.empty()) std::printf(" %14s %8s", "Embree Mrays/s", "ratio");
      std::printf("\n");
      for (size_t i = 0; i < r.kinds.size(); ++i) {
        const auto& k = r.kinds[i];
        std::printf("  %-8s %10llu %10.2f %12.1f", k.kind.c_str(), (unsigned long long)k.rays, k.median_ms, k.mrays_per_second());
        if (i < r.embree.size())
          std::printf(" %14.1f %8.2f", r.embree[i].mrays_per_second(), k.mrays_per_second() / r.embree[i].mrays_per_second());
        std::printf("\n");
      }
      if (!r.embree_note.empty()) std::printf("  Embree: %s\n", r.embree_note.c_str());
    }
    if (json) std::cout << all.dump(2) << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera-bench: error: %s\n", e.what());
    return 1;
  }
}
