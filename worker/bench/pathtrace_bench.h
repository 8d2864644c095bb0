#pragma once
// `tessera-bench pathtrace`: the measurements of Kim & Sung 2021 for the `pathtrace` mode on packed
// scenes — Table 2 (MSE and SSIM of one-sample stereo frames against a ground truth of many
// samples, plain vs proposed), Table 3 (time per stereo frame), the same comparison at equal
// time (progressive accumulation, what a headset user sees after t milliseconds), and the CPU +
// GPU split (sample throughput and CPU utilization with and without CPU helper threads).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker/render/pathtrace_renderer.h"

namespace tessera::bench {

struct PathTraceBenchOptions {
  std::string device = "host";         // main device for quality and timing
  uint32_t width = 640, height = 480;  // per eye, for timing (Table 3)
  uint32_t quality_width = 320, quality_height = 240;  // per eye, for Table 2 and equal time
  uint32_t gt_spp = 1024;              // ground truth: plain variant, this many samples
  std::string gt_dir = ".";            // ground truths are cached here as PNG
  uint32_t seeds = 3;                  // one-sample frames averaged per variant (Table 2)
  uint32_t frames = 3;                 // stereo frames timed per variant (Table 3)
  std::vector<uint32_t> equal_time_spp{1, 4, 16};  // plain checkpoints for the equal-time table
  std::string sections = "gt,quality,timing,equal";  // also: cpu
  // What "time" is for Table 3 and the equal-time runs: "wall" (steady clock) or "cpu" (this
  // process's user + system time, all its threads: robust on a machine others are loading too).
  std::string clock = "wall";
  // The settings both variants start from (variant and spp are set per run): T_d, P_max, Russian
  // roulette depth, and the proposed variant's parts (ablations).
  PathTraceSettings base;
  // CPU + GPU: main device and the helper counts to compare.
  std::string cpu_device = "cpu";
  std::vector<unsigned> cpu_threads{0, 1};
  uint32_t cpu_spp = 4;
  uint32_t cpu_tile = 64;  // tile size of the CPU + GPU frames (0: the whole image as one tile)
  unsigned host_threads = 0;
  // OpenCL devices keep tile sums in device memory (merge and resolve there); false reads every
  // launch back and merges and resolves on the host.
  bool device_sums = true;
};

nlohmann::json run_pathtrace_bench(const std::string& scene_path, const PathTraceBenchOptions& options);
// Human-readable tables of one scene's result.
std::string format_pathtrace_bench(const nlohmann::json& result);

// The `pathtrace` subcommand of tessera-bench: registers its options on construction.
class PathTraceCommand {
 public:
  explicit PathTraceCommand(CLI::App& app);
  bool parsed() const { return command_->parsed(); }
  int run();  // prints the tables (or JSON); throws Error on bad input

 private:
  CLI::App* command_;
  std::vector<std::string> scenes_;
  PathTraceBenchOptions options_;
  std::string size_ = "640x480", quality_size_ = "320x240";
  bool json_ = false;
};

}  // namespace tessera::bench
