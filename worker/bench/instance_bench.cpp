#include "worker/bench/instance_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/scene/scene_nodes.h"
#include "common/scene/top_level_bvh.h"

namespace tessera::bench {

InstanceCommand::InstanceCommand(CLI::App& app) {
  command_ = app.add_subcommand("instances", "Time the top-level rebuild of an instanced scene (per frame that moves something)");
  command_->add_option("--count", count_, "Instances")->capture_default_str()->check(CLI::Range(1u, kMaxInstances));
  command_->add_option("--rounds", rounds_, "Rebuilds timed (the median and the 95th percentile are shown)")
      ->capture_default_str()->check(CLI::Range(1, 100000));
  command_->add_flag("--json", json_, "Print the results as one JSON object");
}

int InstanceCommand::run() {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> position(-50.0f, 50.0f), angle(0.0f, 6.2831853f), size(0.5f, 2.0f);
  const std::vector<Aabb> objects{Aabb{{-0.1f, 0.03f, -0.06f}, {0.06f, 0.19f, 0.06f}}};  // the Stanford bunny's box
  std::vector<Instance> instances;
  for (uint32_t i = 0; i < count_; ++i) {
    const float a = angle(rng), s = size(rng);
    const NodeTrs trs{{position(rng), position(rng), position(rng)}, {0.0f, std::sin(a / 2), 0.0f, std::cos(a / 2)}, {s, s, s}};
    instances.push_back({0, i, trs.matrix()});
  }
  std::vector<double> ms;
  TopLevelBvh top;
  for (int round = 0; round < rounds_; ++round) {
    const auto start = std::chrono::steady_clock::now();
    top = build_top_level(instances, objects, "bench");
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2], p95 = ms[std::min(ms.size() - 1, ms.size() * 95 / 100)];
  const double per_instance = double(top.device_bytes()) / count_;
  if (json_) {
    nlohmann::json out{{"instances", count_}, {"rounds", rounds_},     {"rebuild_ms_median", median},
                       {"rebuild_ms_p95", p95}, {"depth", top.depth}, {"top_level_bytes", top.device_bytes()},
                       {"bytes_per_instance", per_instance}};
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("instances  rounds  rebuild median  rebuild p95  depth  top level  per instance\n");
    std::printf("%9u  %6d  %11.3f ms  %8.3f ms  %5u  %7.1f KB  %8.1f B\n", count_, rounds_, median, p95, top.depth,
                double(top.device_bytes()) / 1024.0, per_instance);
  }
  return 0;
}

}  // namespace tessera::bench
