#include "worker/bench/pathtrace_bench.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <thread>

#include "common/base/error.h"
#include "common/base/usage_error.h"
#include "common/base/progress.h"
#include "common/image/metrics.h"
#include "common/image/png_io.h"
#include "common/render/camera_setup.h"
#include "common/render/stereo.h"
#include "worker/render/pathtrace_frame.h"

namespace tessera::bench {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct Setup {
  PtView view;
  RenderSettings settings;
};

Setup make_setup(const PackedScene& scene, uint32_t width, uint32_t height) {
  CameraSpec head;
  head.pose = pose_from_manifest(scene.manifest().camera());
  head.vertical_fov_degrees = scene.manifest().camera().vertical_fov_degrees();
  Setup s;
  s.view = make_pt_view(head, true, default_ipd(scene.manifest()), width, height);
  s.settings = default_pathtrace_settings(scene);
  return s;
}

PathTraceSettings g_base;  // PathTraceBenchOptions::base of the running bench

PathTraceSettings variant_settings(PtVariant variant, uint32_t spp) {
  PathTraceSettings pt = g_base;
  pt.variant = variant;
  pt.spp = spp;
  return pt;
}

ImageRgba8 stereo(const PtFrameResult& f) { return side_by_side(f.eyes[0], f.eyes[1]); }

PathTraceRendererOptions renderer_options(const PathTraceBenchOptions& o, const std::string& device, unsigned helpers = 0) {
  return {{device, std::nullopt, o.host_threads}, helpers, o.device_sums};
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Milliseconds of the chosen clock since `start_*`.
struct Stopwatch {
  bool cpu;
  Clock::time_point wall0 = Clock::now();
  double cpu0 = cpu_seconds();
  double ms() const {
    return cpu ? 1e3 * (cpu_seconds() - cpu0) : std::chrono::duration<double, std::milli>(Clock::now() - wall0).count();
  }
};

double percent_lower(double base, double value) { return base != 0 ? 100.0 * (base - value) / base : 0.0; }
double percent_higher(double base, double value) { return base != 0 ? 100.0 * (value - base) / base : 0.0; }

std::string size_text(uint32_t w, uint32_t h) { return std::to_string(w) + "x" + std::to_string(h); }

// The plain variant at many samples, cached as PNG (side by side, left eye first).
ImageRgba8 ground_truth(const PackedScene& scene, const std::string& stem, const PathTraceBenchOptions& o, json& out) {
  const auto path = std::filesystem::path(o.gt_dir) /
                    (stem + "_gt_" + size_text(o.quality_width, o.quality_height) + "_" + std::to_string(o.gt_spp) + "spp.png");
  out["ground_truth"] = {{"path", path.string()}, {"spp", o.gt_spp}, {"size", size_text(o.quality_width, o.quality_height)}};
  if (std::filesystem::exists(path)) {
    out["ground_truth"]["cached"] = true;
    return read_image(path);
  }
  Setup s = make_setup(scene, o.quality_width, o.quality_height);
  PathTraceRenderer renderer(scene, renderer_options(o, o.device));
  const uint32_t chunk = renderer.is_opencl() ? 64 : 8;  // samples between progress updates
  ProgressBar bar("ground truth " + stem);
  const auto start = Clock::now();
  PtFrameResult frame;
  for (uint32_t done = 0; done < o.gt_spp; done += chunk) {
    frame = render_pathtrace_frame(renderer, s.view, s.settings, variant_settings(PtVariant::plain, std::min(chunk, o.gt_spp - done)));
    bar.update(double(done + chunk) / o.gt_spp, std::to_string(std::min(done + chunk, o.gt_spp)) + " spp");
  }
  bar.finish();
  const ImageRgba8 image = stereo(frame);
  std::filesystem::create_directories(path.parent_path().empty() ? "." : path.parent_path());
  write_png(path, image);
  out["ground_truth"]["cached"] = false;
  out["ground_truth"]["seconds"] = std::chrono::duration<double>(Clock::now() - start).count();
  return image;
}

json quality(const PackedScene& scene, const ImageRgba8& gt, const PathTraceBenchOptions& o) {
  Setup s = make_setup(scene, o.quality_width, o.quality_height);
  PathTraceRenderer renderer(scene, renderer_options(o, o.device));
  json out;
  for (PtVariant v : {PtVariant::plain, PtVariant::proposed}) {
    double mse = 0, ssim = 0;
    json runs = json::array();
    for (uint32_t k = 0; k < o.seeds; ++k) {
      s.settings.seed = 1000 + k;  // a new seed is a new accumulation: one-sample frames
      const ImageRgba8 img = stereo(render_pathtrace_frame(renderer, s.view, s.settings, variant_settings(v, 1)));
      const double m = mse_rgb(img, gt), q = ssim_luma(img, gt);
      mse += m / o.seeds;
      ssim += q / o.seeds;
      runs.push_back({{"mse", m}, {"ssim", q}});
    }
    out[to_string(v)] = {{"mse", mse}, {"ssim", ssim}, {"runs", runs}};
  }
  out["mse_decrease_percent"] = percent_lower(out["plain"]["mse"], out["proposed"]["mse"]);
  out["ssim_increase_percent"] = percent_higher(out["plain"]["ssim"], out["proposed"]["ssim"]);
  return out;
}

json timing(const PackedScene& scene, const PathTraceBenchOptions& o) {
  Setup s = make_setup(scene, o.width, o.height);
  PathTraceRenderer renderer(scene, renderer_options(o, o.device));
  json out;
  s.settings.seed = 999;
  render_pathtrace_frame(renderer, s.view, s.settings, variant_settings(PtVariant::proposed, 1));  // warm-up
  for (PtVariant v : {PtVariant::plain, PtVariant::proposed}) {
    std::vector<double> ms;
    double reprojected = 0, stopped = 0, segments = 0, samples = 0, wall = 0, device = 0, merge = 0, resolve = 0;
    for (uint32_t k = 0; k < o.frames; ++k) {
      s.settings.seed = 2000 + k;
      const Stopwatch watch{o.clock == "cpu"};
      const PtFrameResult f = render_pathtrace_frame(renderer, s.view, s.settings, variant_settings(v, 1));
      ms.push_back(watch.ms());
      wall += f.totals.ms / o.frames;
      device += f.totals.device_ms / o.frames;  // tracing kernels (device events; 0 on the host backend)
      // Host backend or host sums: host time. Device sums: the merge kernels' device time, and the
      // resolve from its start to the RGBA8 pixels on the host (kernels and read-back).
      merge += f.totals.merge_ms / o.frames;
      resolve += f.totals.resolve_ms / o.frames;
      reprojected += double(f.totals.reprojected);
      stopped += double(f.totals.stopped);
      segments += double(f.totals.segments);
      samples += double(f.totals.device_pixel_samples);
    }
    double mean = 0, var = 0;
    for (double m : ms) mean += m / double(ms.size());
    for (double m : ms) var += (m - mean) * (m - mean) / double(std::max<size_t>(1, ms.size() - 1));
    out[to_string(v)] = {{"ms", mean},
                         {"ms_stddev", std::sqrt(var)},
                         {"wall_ms", wall},
                         {"device_ms", device},
                         {"merge_resolve_ms", merge + resolve},
                         {"merge_ms", merge},
                         {"resolve_ms", resolve},
                         {"frames", ms},
                         {"extra_samples_per_sample", reprojected / samples},
                         {"stopped_per_sample", stopped / samples},
                         {"segments_per_sample", segments / samples}};
  }
  out["speedup_percent"] = percent_lower(out["plain"]["ms"], out["proposed"]["ms"]);
  out["size"] = size_text(o.width, o.height);
  out["device"] = renderer.description();
  out["clock"] = o.clock;
  out["merge_resolve_on"] = renderer.sums_on_device() ? "device" : "host";
  return out;
}

// Progressive frames of one sample each while the pose holds: (elapsed ms, MSE, SSIM) after each.
json progressive(PathTraceRenderer& renderer, Setup s, PtVariant v, const ImageRgba8& gt, uint32_t max_calls, double budget_ms,
                 bool cpu_clock) {
  json steps = json::array();
  s.settings.seed = 77;
  renderer.cache().clear();
  double elapsed = 0;
  for (uint32_t k = 1; k <= max_calls && (budget_ms <= 0 || elapsed < budget_ms); ++k) {
    const Stopwatch watch{cpu_clock};
    const PtFrameResult f = render_pathtrace_frame(renderer, s.view, s.settings, variant_settings(v, 1));
    elapsed += watch.ms();  // the frame's time; metrics below are not counted
    const ImageRgba8 img = stereo(f);
    steps.push_back({{"spp", k}, {"ms", elapsed}, {"mse", mse_rgb(img, gt)}, {"ssim", ssim_luma(img, gt)}});
  }
  return steps;
}

json equal_time(const PackedScene& scene, const ImageRgba8& gt, const PathTraceBenchOptions& o) {
  Setup s = make_setup(scene, o.quality_width, o.quality_height);
  PathTraceRenderer renderer(scene, renderer_options(o, o.device));
  const uint32_t max_spp = *std::max_element(o.equal_time_spp.begin(), o.equal_time_spp.end());
  const bool cpu_clock = o.clock == "cpu";
  const json plain = progressive(renderer, s, PtVariant::plain, gt, max_spp, 0, cpu_clock);
  const double budget = plain.back()["ms"];
  const json proposed = progressive(renderer, s, PtVariant::proposed, gt, 4 * max_spp, budget, cpu_clock);
  json rows = json::array();
  for (uint32_t k : o.equal_time_spp) {
    const json& p = plain[k - 1];
    const double t = p["ms"];
    const json* q = &proposed[0];
    for (const json& step : proposed)
      if (double(step["ms"]) <= t) q = &step;
    rows.push_back({{"plain_spp", k},
                    {"time_ms", t},
                    {"plain_mse", p["mse"]},
                    {"plain_ssim", p["ssim"]},
                    {"proposed_spp", (*q)["spp"]},
                    {"proposed_ms", (*q)["ms"]},
                    {"proposed_mse", (*q)["mse"]},
                    {"proposed_ssim", (*q)["ssim"]},
                    {"mse_decrease_percent", percent_lower(p["mse"], (*q)["mse"])},
                    {"ssim_increase_percent", percent_higher(p["ssim"], (*q)["ssim"])}});
  }
  return {{"rows", rows}, {"clock", o.clock}, {"plain_steps", plain}, {"proposed_steps", proposed}};
}

json cpu_gpu(const PackedScene& scene, const PathTraceBenchOptions& o) {
  Setup s = make_setup(scene, o.width, o.height);
  json out = json::array();
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned helpers : o.cpu_threads) {
    PathTraceRenderer renderer(scene, renderer_options(o, o.cpu_device, helpers));
    PathTraceSettings pt = variant_settings(PtVariant::proposed, o.cpu_spp);
    pt.launch_samples = 1;  // one read-back and merge per sample: helper batches merge in between
    s.settings.seed = 5;
    render_pathtrace_frame(renderer, s.view, s.settings, variant_settings(PtVariant::proposed, 1), o.cpu_tile);  // warm-up
    uint64_t device_samples = 0, helper_samples = 0;
    double wall = 0, device_ms = 0;
    const double cpu0 = cpu_seconds();
    for (uint32_t k = 0; k < o.frames; ++k) {
      s.settings.seed = 3000 + k;
      const PtFrameResult f = render_pathtrace_frame(renderer, s.view, s.settings, pt, o.cpu_tile);
      device_samples += f.totals.device_pixel_samples;
      helper_samples += f.totals.helper_pixel_samples;
      wall += f.totals.ms;
      device_ms += f.totals.device_ms;
    }
    const double cpu = cpu_seconds() - cpu0;
    out.push_back({{"cpu_threads", helpers},
                   {"device", renderer.description()},
                   {"frame_ms", wall / o.frames},
                   {"device_kernel_ms", device_ms / o.frames},
                   {"device_pixel_samples", device_samples},
                   {"helper_pixel_samples", helper_samples},
                   {"msamples_per_s", double(device_samples + helper_samples) / (wall * 1e3)},
                   {"cpu_utilization_percent", 100.0 * cpu / (wall * 1e-3 * cores)},
                   {"cores", cores}});
  }
  return out;
}

bool wants(const std::string& sections, const std::string& name) {
  std::stringstream stream(sections);
  std::string item;
  while (std::getline(stream, item, ','))
    if (item == name) return true;
  return false;
}

}  // namespace

json run_pathtrace_bench(const std::string& scene_path, const PathTraceBenchOptions& o) {
  if (o.clock != "wall" && o.clock != "cpu") throw UsageError("unknown --clock '" + o.clock + "' (expected wall or cpu)");
  g_base = o.base;
  const PackedScene scene = PackedScene::load(scene_path);
  std::string stem = std::filesystem::path(scene_path).stem().string();
  json out{{"scene", std::filesystem::path(scene_path).filename().string()},
           {"triangles", scene.triangle_count()},
           {"quality_size", size_text(o.quality_width, o.quality_height)}};
  ImageRgba8 gt;
  const bool need_gt = wants(o.sections, "gt") || wants(o.sections, "quality") || wants(o.sections, "equal");
  if (need_gt) gt = ground_truth(scene, stem, o, out);
  if (wants(o.sections, "quality")) out["quality"] = quality(scene, gt, o);
  if (wants(o.sections, "timing")) out["timing"] = timing(scene, o);
  if (wants(o.sections, "equal")) out["equal_time"] = equal_time(scene, gt, o);
  if (wants(o.sections, "cpu")) out["cpu_gpu"] = cpu_gpu(scene, o);
  return out;
}

std::string format_pathtrace_bench(const json& r) {
  std::string s;
  char line[512];
  std::snprintf(line, sizeof line, "%s (%llu triangles)\n", r["scene"].get<std::string>().c_str(),
                (unsigned long long)r["triangles"].get<uint64_t>());
  s += line;
  if (r.contains("quality")) {
    const json& q = r["quality"];
    std::snprintf(line, sizeof line,
                  "  Table 2 (%s per eye, 1 spp vs %u-spp ground truth): plain MSE %.2f SSIM %.4f | proposed MSE %.2f "
                  "SSIM %.4f | MSE %+.2f %%, SSIM %+.2f %%\n",
                  r["quality_size"].get<std::string>().c_str(), r["ground_truth"]["spp"].get<unsigned>(),
                  q["plain"]["mse"].get<double>(), q["plain"]["ssim"].get<double>(), q["proposed"]["mse"].get<double>(),
                  q["proposed"]["ssim"].get<double>(), -q["mse_decrease_percent"].get<double>(),
                  q["ssim_increase_percent"].get<double>());
    s += line;
  }
  if (r.contains("timing")) {
    const json& t = r["timing"];
    std::snprintf(line, sizeof line,
                  "  Table 3 (%s per eye, %s ms per stereo frame): plain %.1f (±%.1f) | proposed %.1f (±%.1f) | %+.2f %% "
                  "speed; %.2f extra samples per sample, %.2f stopped early; kernels %.2f | %.2f ms, merge + resolve (%s) "
                  "%.2f | %.2f ms\n",
                  t["size"].get<std::string>().c_str(), t["clock"].get<std::string>().c_str(), t["plain"]["ms"].get<double>(),
                  t["plain"]["ms_stddev"].get<double>(),
                  t["proposed"]["ms"].get<double>(), t["proposed"]["ms_stddev"].get<double>(),
                  t["speedup_percent"].get<double>(), t["proposed"]["extra_samples_per_sample"].get<double>(),
                  t["proposed"]["stopped_per_sample"].get<double>(), t["plain"]["device_ms"].get<double>(),
                  t["proposed"]["device_ms"].get<double>(), t.value("merge_resolve_on", std::string("host")).c_str(),
                  t["plain"]["merge_resolve_ms"].get<double>(),
                  t["proposed"]["merge_resolve_ms"].get<double>());
    s += line;
  }
  if (r.contains("equal_time")) {
    for (const json& row : r["equal_time"]["rows"]) {
      std::snprintf(line, sizeof line,
                    "  equal time %8.1f ms: plain %2u spp MSE %8.2f SSIM %.4f | proposed %2u spp MSE %8.2f SSIM %.4f | "
                    "MSE %+.2f %%, SSIM %+.2f %%\n",
                    row["time_ms"].get<double>(), row["plain_spp"].get<unsigned>(), row["plain_mse"].get<double>(),
                    row["plain_ssim"].get<double>(), row["proposed_spp"].get<unsigned>(), row["proposed_mse"].get<double>(),
                    row["proposed_ssim"].get<double>(), -row["mse_decrease_percent"].get<double>(),
                    row["ssim_increase_percent"].get<double>());
      s += line;
    }
  }
  if (r.contains("cpu_gpu")) {
    for (const json& row : r["cpu_gpu"]) {
      std::snprintf(line, sizeof line,
                    "  CPU+GPU: %u helper threads: %.3f Msamples/s, CPU %.0f %% of %u cores, %.1f ms per frame "
                    "(%llu device + %llu helper pixel samples) on %s\n",
                    row["cpu_threads"].get<unsigned>(), row["msamples_per_s"].get<double>(),
                    row["cpu_utilization_percent"].get<double>(), row["cores"].get<unsigned>(), row["frame_ms"].get<double>(),
                    (unsigned long long)row["device_pixel_samples"].get<uint64_t>(),
                    (unsigned long long)row["helper_pixel_samples"].get<uint64_t>(), row["device"].get<std::string>().c_str());
      s += line;
    }
  }
  return s;
}

namespace {

std::pair<uint32_t, uint32_t> parse_wh(const std::string& text, const char* what) {
  unsigned w = 0, h = 0;
  char x = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%u%c%u%c", &w, &x, &h, &extra) != 3 || x != 'x' || w == 0 || h == 0 || w > 8192 || h > 8192)
    throw Error(std::string("bad ") + what + " '" + text + "' (expected WIDTHxHEIGHT such as 640x480)");
  return {w, h};
}

}  // namespace

PathTraceCommand::PathTraceCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "pathtrace",
      "The stereo path tracer (Kim & Sung 2021) on packed scenes: Table 2 (MSE / SSIM of one-sample stereo frames\n"
      "against a plain-variant ground truth, cached as PNG), Table 3 (ms per stereo frame), the comparison at equal\n"
      "time (progressive frames while the pose holds) and, with --sections cpu, the CPU + GPU split (throughput and\n"
      "CPU utilization with and without CPU helper threads).");
  command_->add_option("scenes", scenes_, "Packed scenes (.tpk), e.g. pt_teapot.tpk ... pt_torus_knot.tpk")->required();
  command_->add_option("--device", options_.device, "Main device: host | auto | gpu | cpu | <index>")->capture_default_str();
  command_->add_option("--host-threads", options_.host_threads, "Threads of the host backend (0: all cores)")->capture_default_str();
  command_->add_option("--size", size_, "Per-eye size of the timed frames (Table 3, CPU + GPU)")->capture_default_str();
  command_->add_option("--quality-size", quality_size_, "Per-eye size of Table 2, the equal-time runs and the ground truth")
      ->capture_default_str();
  command_->add_option("--gt-spp", options_.gt_spp, "Samples of the ground truth")->capture_default_str()->check(CLI::Range(16u, 1u << 20));
  command_->add_option("--gt-dir", options_.gt_dir, "Folder of cached ground truths")->capture_default_str();
  command_->add_option("--seeds", options_.seeds, "One-sample frames averaged per variant (Table 2)")
      ->capture_default_str()->check(CLI::Range(1u, 1000u));
  command_->add_option("--frames", options_.frames, "Frames timed per variant")->capture_default_str()->check(CLI::Range(1u, 1000u));
  command_->add_option("--equal-time-spp", options_.equal_time_spp, "Plain-variant sample counts of the equal-time table")
      ->delimiter(',')->capture_default_str()->check(CLI::Range(1u, 4096u));
  command_->add_option("--sections", options_.sections, "gt,quality,timing,equal,cpu")->capture_default_str();
  command_->add_option("--cpu-device", options_.cpu_device, "Main device of the CPU + GPU comparison")->capture_default_str();
  command_->add_option("--cpu-threads", options_.cpu_threads, "Helper thread counts to compare, e.g. 0,1")
      ->delimiter(',')->capture_default_str()->check(CLI::Range(0u, 256u));
  command_->add_option("--cpu-tile", options_.cpu_tile, "Tile size of the CPU + GPU frames, as a worker renders them (0: one tile)")
      ->capture_default_str();
  command_->add_option("--cpu-spp", options_.cpu_spp, "Samples per frame in the CPU + GPU comparison")
      ->capture_default_str()->check(CLI::Range(1u, 4096u));
  command_->add_option("--clock", options_.clock, "Time of Table 3 and equal time: wall | cpu (process CPU time)")
      ->capture_default_str();
  PathTraceSettings& b = options_.base;
  command_->add_option("--depth-threshold", b.depth_threshold, "T_d")->capture_default_str();
  command_->add_option("--p-max", b.p_max, "P_max")->capture_default_str()->check(CLI::Range(0.0f, 0.99f));
  command_->add_option("--rr-depth", b.rr_depth, "Russian roulette from this vertex depth on (both variants)")->capture_default_str();
  command_->add_option("--median-max-spp", b.median_max_samples, "Median filter while a pixel holds at most this many samples")
      ->capture_default_str();
  command_->add_flag("--no-reproject{false}", b.reproject, "Proposed without reprojection");
  command_->add_flag("--no-gaze-stop{false}", b.gaze_stop, "Proposed without the gaze stop");
  command_->add_flag("--no-median{false}", b.median, "Proposed without the median filter");
  command_->add_flag("--stop-compensate", b.stop_compensate, "Weight paths surviving the gaze stop by 1 / (1 - P_d)");
  command_->add_flag("--visibility-ray", b.visibility_ray, "Reprojection visibility by shadow ray instead of first hits");
  command_->add_flag("--host-merge{false}", options_.device_sums,
                     "On OpenCL devices read every launch back and merge and resolve on the host (not in device memory)");
  command_->add_flag("--json", json_, "Print one JSON array with a result per scene");
}

int PathTraceCommand::run() {
  std::tie(options_.width, options_.height) = parse_wh(size_, "--size");
  std::tie(options_.quality_width, options_.quality_height) = parse_wh(quality_size_, "--quality-size");
  if (options_.equal_time_spp.empty()) throw UsageError("--equal-time-spp needs at least one value");
  nlohmann::json all = nlohmann::json::array();
  for (const auto& scene : scenes_) {
    nlohmann::json r = run_pathtrace_bench(scene, options_);
    if (json_)
      all.push_back(std::move(r));
    else
      std::cout << format_pathtrace_bench(r) << std::flush;
  }
  if (json_) std::cout << all.dump(2) << std::endl;
  return 0;
}

}  // namespace tessera::bench
