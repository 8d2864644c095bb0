#include "worker/bench/traversal_stats.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

namespace {
// The counters kernels/accel/kdtree_traverse.h adds to (TS_KD_COUNT), one set per thread.
struct KdCounts {
  uint64_t node = 0, inner = 0, leaf = 0, triangle = 0, push = 0, pop = 0, inner_refs = 0;
  void add(const KdCounts& o) {
    node += o.node;
    inner += o.inner;
    leaf += o.leaf;
    triangle += o.triangle;
    push += o.push;
    pop += o.pop;
    inner_refs += o.inner_refs;
  }
};
thread_local KdCounts kd_counts;
}  // namespace

#define TS_KD_COUNT(event, n) (kd_counts.event += (n))
// The one-ray traversal GPUs run (a leaf's triangles are tested in SIMD batches here, counted as
// tests one by one; only a shadow ray's last batch may count a few more than a GPU tests).
#include "kernels/integrators/bench_rays.h"

namespace tessera::bench {
namespace {

constexpr uint32_t kWarpW = 8, kWarpH = 4;

struct Totals {
  KdCounts sum;
  uint64_t rays = 0, steps = 0, warp_max_steps = 0;
  void add(const Totals& o) {
    sum.add(o.sum);
    rays += o.rays;
    steps += o.steps;
    warp_max_steps += o.warp_max_steps;
  }
};

// Counts the rays trace(x, y) casts (it returns false where a pixel has no ray), warp by warp.
template <typename Trace>
Totals count_rays(const CameraParams& camera, Trace trace) {
  const uint32_t warps_x = (camera.width + kWarpW - 1) / kWarpW, warps_y = (camera.height + kWarpH - 1) / kWarpH;
  std::atomic<uint32_t> next{0};
  std::vector<Totals> per_thread(std::max(1u, std::thread::hardware_concurrency()));
  auto work = [&](Totals& totals) {
    for (uint32_t row; (row = next.fetch_add(1)) < warps_y;)
      for (uint32_t wx = 0; wx < warps_x; ++wx) {
        uint64_t longest = 0;
        for (uint32_t ly = 0; ly < kWarpH; ++ly)
          for (uint32_t lx = 0; lx < kWarpW; ++lx) {
            const uint32_t x = wx * kWarpW + lx, y = row * kWarpH + ly;
            if (x >= camera.width || y >= camera.height) continue;
            kd_counts = {};
            if (!trace(x, y)) continue;
            const uint64_t steps = kd_counts.node + kd_counts.triangle;
            longest = std::max(longest, steps);
            totals.steps += steps;
            ++totals.rays;
            totals.sum.add(kd_counts);
          }
        totals.warp_max_steps += longest * kWarpW * kWarpH;
      }
  };
  std::vector<std::thread> pool;
  for (size_t i = 1; i < per_thread.size(); ++i) pool.emplace_back(work, std::ref(per_thread[i]));
  work(per_thread[0]);
  for (auto& t : pool) t.join();
  Totals all;
  for (const auto& t : per_thread) all.add(t);
  return all;
}

TraversalStats summarize(const std::string& kind, const Totals& t) {
  TraversalStats s;
  s.kind = kind;
  s.rays = t.rays;
  const double n = t.rays ? double(t.rays) : 1.0;
  s.nodes = t.sum.node / n;
  s.inner = t.sum.inner / n;
  s.leaves = t.sum.leaf / n;
  s.triangles = t.sum.triangle / n;
  s.pushes = t.sum.push / n;
  s.pops = t.sum.pop / n;
  s.inner_triangles = t.sum.inner_refs / n;
  s.warp_efficiency = t.warp_max_steps ? double(t.steps) / double(t.warp_max_steps) : 0.0;
  return s;
}

}  // namespace

std::vector<TraversalStats> traversal_stats(const PackedScene& scene, const CameraParams& camera, const std::array<float, 3>& light,
                                            bool facing_only, SceneMemory memory) {
  const SceneView view = scene.host_view(memory);
  const float3 l = make_float3(light[0], light[1], light[2]);
  std::vector<float4> hits(size_t(camera.width) * camera.height);
  std::vector<TraversalStats> out;
  out.push_back(summarize("primary", count_rays(camera, [&](uint32_t x, uint32_t y) {
                            hits[size_t(y) * camera.width + x] = bench_trace_primary(&view, &camera, x, y);
                            return true;
                          })));
  out.push_back(summarize("shadow", count_rays(camera, [&](uint32_t x, uint32_t y) {
                            const float4 rec = hits[size_t(y) * camera.width + x];
                            return rec.x >= 0.0f && bench_trace_shadow(&view, &camera, x, y, rec, l, facing_only) != 2u;
                          })));
  out.push_back(summarize("diffuse", count_rays(camera, [&](uint32_t x, uint32_t y) {
                            const float4 rec = hits[size_t(y) * camera.width + x];
                            return rec.x >= 0.0f && bench_trace_diffuse(&view, &camera, x, y, rec, TS_BENCH_DIFFUSE_SEED).x > -2.0f;
                          })));
  return out;
}

std::string format_traversal_stats(const std::vector<TraversalStats>& stats) {
  std::string out = "  traversal per ray (host count, one ray at a time as on GPUs; warps of 8 x 4 pixels):\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-8s %10s %8s %8s %8s %9s %9s %8s %8s %9s\n", "rays", "count", "nodes", "inner", "leaves",
                "triangles", "in inner", "pushes", "pops", "warp eff");
  out += line;
  for (const auto& s : stats) {
    std::snprintf(line, sizeof line, "  %-8s %10llu %8.1f %8.1f %8.1f %9.1f %9.1f %8.1f %8.1f %9.2f\n", s.kind.c_str(),
                  (unsigned long long)s.rays, s.nodes, s.inner, s.leaves, s.triangles, s.inner_triangles, s.pushes, s.pops,
                  s.warp_efficiency);
    out += line;
  }
  return out;
}

nlohmann::json to_json(const TraversalStats& s) {
  return {{"rays", s.rays},       {"nodes", s.nodes},   {"inner", s.inner}, {"leaves", s.leaves},
          {"triangles", s.triangles}, {"inner_node_triangles", s.inner_triangles}, {"pushes", s.pushes}, {"pops", s.pops},   {"warp_efficiency", s.warp_efficiency}};
}

}  // namespace tessera::bench
