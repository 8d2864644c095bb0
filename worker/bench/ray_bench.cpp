#include "worker/bench/ray_bench.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "common/base/error.h"
#include "common/base/median.h"
#include "common/base/hash.h"
#include "common/cl/commands.h"
#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/program.h"
#include "common/image/png_io.h"
#include "common/render/camera_setup.h"
#include "kernels/integrators/bench_rays.h"  // TS_BENCH_DIFFUSE_SEED
#include "kernels/render/ray_octant_sort.h"
#include "worker/bench/embree_peer.h"
#include "common/render/scene_uploads.h"
#include "worker/render/device_scene.h"
#include "worker/render/longest_first.h"
#include "worker/render/persistent_launch.h"
#include "worker/render/pixel_work_items.h"
#include "worker/render/tile_renderer.h"

namespace tessera::bench {
namespace {

// Runs the launch once to warm up, then `passes` times; median device time of the launch in ms.
template <typename Launch>
double time_launches(const Launch& launch, int passes) {
  launch().wait();
  std::vector<double> ms;
  for (int i = 0; i < passes; ++i) ms.push_back(launch().timing().run_ms());
  return median(ms);
}

// How the benchmark kernels are launched (RayBenchOptions::schedule). A persistent launch takes its
// kernel's "_persistent" variant, whose last argument is the group counter, zeroed before each launch;
// a longest-first launch its "_ordered" variant, whose last two are the group order and costs
// (worker/render/longest_first.h): the warm-up runs in grid order, each timed pass in the order the
// pass before it gives.
class RayLaunches {
 public:
  RayLaunches(const cl::Device& device, cl::DeviceMemoryBudget& budget, const RayBenchOptions& o)
      : device_(device), budget_(budget), options_(o), local_{o.local_x, o.local_y}, frozen_(o.costs_from_yaw_degrees.has_value()) {
    if (persistent()) counter_ = budget.create("bench_group_counter", 4);
  }
  bool grid() const { return options_.schedule == "grid"; }
  uint32_t groups_x() const { return (options_.size + local_.x - 1) / local_.x; }
  uint32_t groups_y() const { return (options_.size + local_.y - 1) / local_.y; }
  bool persistent() const { return options_.schedule == "persistent"; }
  bool longest_first() const { return options_.schedule == "longest-first"; }
  std::string kernel_name(const std::string& base) const {
    return persistent() ? base + "_persistent" : longest_first() ? base + "_ordered" : base;
  }
  // Sets the schedule's arguments of the kernel after the others (arg: the next index).
  void finish_args(cl::Kernel& kernel, cl_uint arg) {
    if (persistent()) kernel.set_arg(arg, counter_);
    if (longest_first()) {
      auto& order = orders_[kernel.name()];
      order = std::make_unique<LongestFirstOrder>(device_, budget_, groups_x() * groups_y(), kernel.name());
      order->set_args(kernel, arg);
    }
  }
  // longest-first: one launch whose group costs order every later one (RayBenchOptions::costs_from_yaw_degrees).
  void learn_order(const cl::Kernel& kernel, cl::Range2D items) const {
    LongestFirstOrder& order = *orders_.at(kernel.name());
    order.before_launch();
    cl::launch_2d(device_, kernel, items, local_).wait();
    order.after_launch();
  }
  // longest-first: the picture of what the kernel's groups cost in its last launch.
  void write_cost_map(const cl::Kernel& kernel, const std::string& path) const {
    write_png(path, group_cost_image(orders_.at(kernel.name())->costs(), groups_x(), local_.x, local_.y));
  }
  // Median ms of the kernel over `items` work items (persistent: as many groups as fill the device).
  double time(const cl::Kernel& kernel, cl::Range2D items) const {
    if (longest_first()) {
      LongestFirstOrder& order = *orders_.at(kernel.name());
      return time_launches(
          [&] {
            order.before_launch();
            cl::Event launch = cl::launch_2d(device_, kernel, items, local_);
            launch.wait();
            if (!frozen_) order.after_launch();
            return launch;
          },
          options_.passes);
    }
    if (!persistent()) return time_launches([&] { return cl::launch_2d(device_, kernel, items, local_); }, options_.passes);
    const cl::Range2D range = persistent_range(device_, local_, options_.persistent_groups_per_unit);
    return time_launches(
        [&] {
          const cl_uint zero = 0;
          cl::write_buffer(device_, counter_, &zero, sizeof(zero));
          return cl::launch_2d(device_, kernel, range, local_);
        },
        options_.passes);
  }

 private:
  const cl::Device& device_;
  cl::DeviceMemoryBudget& budget_;
  const RayBenchOptions& options_;
  cl::Range2D local_;
  bool frozen_;  // longest-first with the order learnt once, from the turned view
  cl::Buffer counter_;
  std::map<std::string, std::unique_ptr<LongestFirstOrder>> orders_;
};

template <typename T>
std::string records_hash(const cl::Device& device, const cl::Buffer& buffer, uint64_t count) {
  const std::vector<T> records = cl::read_buffer<T>(device, buffer, count);
  return hash64_hex(hash64(records.data(), records.size() * sizeof(T)));
}

// Orientation q turned `degrees` about the world's vertical (+y) axis.
std::array<float, 4> turned_about_vertical(const std::array<float, 4>& q, float degrees) {
  const float half = 0.5f * degrees * 3.14159265f / 180.0f, c = std::cos(half), s = std::sin(half);
  // (c, 0, s, 0) * q
  return {c * q[0] - s * q[2], c * q[1] + s * q[3], c * q[2] + s * q[0], c * q[3] - s * q[1]};
}

std::string describe(const tpk::Manifest& m) {
  const auto& q = m.quantization();
  std::string quant = q.positions() ? "pos" : "none";
  if (q.positions() && q.normals()) quant += ",norm";
  if (q.positions() && q.texcoords()) quant += ",tex";
  const char* kd = m.kdtree().variant() == tpk::KD_STANDARD ? "standard" : m.kdtree().variant() == tpk::KD_CHOI ? "choi" : "seo";
  return "quantize " + quant + ", kd-tree " + kd;
}

}  // namespace

std::array<float, 3> bench_light_position(const PackedScene& scene) {
  const auto& m = scene.manifest();
  if (m.point_lights_size() > 0) {
    const auto& p = m.point_lights(0).position();
    return {p.x(), p.y(), p.z()};
  }
  const auto& b = m.bounds();
  return {0.5f * (b.min().x() + b.max().x()), b.max().y() - 0.01f * (b.max().y() - b.min().y()),
          0.5f * (b.min().z() + b.max().z())};
}

RayKindResult shadow_kind_result(const std::vector<uint32_t>& occluded, double median_ms) {
  const uint64_t rays = uint64_t(std::count_if(occluded.begin(), occluded.end(), [](uint32_t o) { return o != 2u; }));
  return {"shadow", rays, median_ms, hash64_hex(hash64(occluded.data(), occluded.size() * sizeof(uint32_t)))};
}

std::string cost_map_path(const RayBenchOptions& options, const std::string& scene_path, const std::string& kind) {
  return options.cost_map + "-" + std::filesystem::path(scene_path).stem().string() + "-" + kind + ".png";
}

RayBenchResult run_ray_bench(const std::string& scene_path, const RayBenchOptions& options) {
  // The schedule options, before any work (tessera-bench's own parser refuses them first).
  if (options.schedule != "grid" && options.schedule != "persistent" && options.schedule != "longest-first")
    throw Error("unknown schedule '" + options.schedule + "' (grid | persistent | longest-first)");
  if (options.costs_from_yaw_degrees && (options.schedule != "longest-first" || options.device == "host"))
    throw Error("--costs-from-yaw needs an OpenCL device and the longest-first schedule");
  if (!options.cost_map.empty() && (options.schedule != "longest-first" || options.device == "host"))
    throw Error("--cost-map needs an OpenCL device and the longest-first schedule");
  if (options.diffuse_order != "pixel" && options.diffuse_order != "octant")
    throw Error("unknown diffuse order '" + options.diffuse_order + "' (pixel | octant)");
  if (options.diffuse_order == "octant" &&
      (options.sort_local_x * options.sort_local_y > TS_RAY_SORT_MAX_GROUP || options.schedule != "grid"))
    throw Error("--diffuse-order octant takes at most " + std::to_string(TS_RAY_SORT_MAX_GROUP) +
                " work items a group and the grid schedule");
  if (options.rays != "generated" && options.rays != "stored")
    throw Error("unknown ray source '" + options.rays + "' (generated | stored)");
  const bool stored = options.rays == "stored";
  if (options.shadow_rays != "all" && options.shadow_rays != "facing")
    throw Error("unknown shadow rays '" + options.shadow_rays + "' (all | facing)");
  const bool facing = options.shadow_rays == "facing";
  if (stored && (options.device == "host" || options.schedule != "grid" || options.diffuse_order != "pixel"))
    throw Error("--rays stored needs an OpenCL device, the grid schedule and diffuse rays in pixel order");
  const PackedScene scene = PackedScene::load(scene_path);
  require_single_level(scene, "tessera-bench rays");  // its stats, packets and peers read one kd-tree
  RayBenchResult result;
  result.ray_source = options.rays;
  result.shadow_rays = options.shadow_rays;
  result.schedule = options.device == "host" ? "" : options.schedule;
  result.costs_from_yaw_degrees = options.costs_from_yaw_degrees;
  result.scene = std::filesystem::path(scene_path).filename().string();
  result.configuration = describe(scene.manifest());
  const char* const facing_note = ", shadow rays only where the surface faces the light";
  if (options.device != "host") {
    if (options.schedule != "grid") result.configuration += ", " + options.schedule + " work-groups";
    if (options.costs_from_yaw_degrees) {
      char turned[96];
      std::snprintf(turned, sizeof turned, " (costs from the view turned %g degrees)", *options.costs_from_yaw_degrees);
      result.configuration += turned;
    }
    if (options.diffuse_order != "pixel") result.configuration += ", diffuse rays in " + options.diffuse_order + " order";
    if (stored) result.configuration += ", stored rays";
  }
  CameraSpec spec;
  spec.pose = pose_from_manifest(scene.manifest().camera());
  spec.vertical_fov_degrees = scene.manifest().camera().vertical_fov_degrees();
  const CameraParams camera = make_camera(spec, options.size, options.size);
  std::optional<CameraParams> turned;  // --costs-from-yaw: the view the group costs come from
  if (options.costs_from_yaw_degrees) {
    CameraSpec t = spec;
    t.pose.orientation = turned_about_vertical(spec.pose.orientation, *options.costs_from_yaw_degrees);
    turned = make_camera(t, options.size, options.size);
  }
  const auto light = bench_light_position(scene);
  const uint64_t pixels = uint64_t(options.size) * options.size;
  if (options.stats) result.stats = traversal_stats(scene, camera, light, facing, options.scene_memory);
  result.scene_memory = scene_memory_name(options.scene_memory);
  result.configuration += std::string(", scene memory ") + result.scene_memory;

  if (options.device == "host") {
    result.device = "host (kernels compiled for the CPU)";
    const SceneFootprint footprint = scene_footprint(scene, KdNodeLayout{}, options.scene_memory);
    result.mesh_tree_bytes_per_triangle = double(footprint.mesh_tree_bytes) / scene.triangle_count();
    result.scene_device_bytes = footprint.device_bytes;
    char bytes[96];
    std::snprintf(bytes, sizeof bytes, " (mesh + kd-tree %.1f B/tri on a device)", result.mesh_tree_bytes_per_triangle);
    result.configuration += bytes;
    if (facing) result.configuration += facing_note;
    result.kinds = host_trace(scene, camera, light, options);
    if (options.embree) result.embree = embree_trace(scene, camera, light, options, result.embree_note);
    return result;
  }
  const cl::Device device = cl::Device::open(options.device);
  result.device = device.info().name + " (" + device.info().platform_name + ")";
  cl::DeviceMemoryBudget budget(device);
  const DeviceScene device_scene(device, budget, scene, kd_node_layout_from_environment(), options.scene_memory);
  result.kd_layout = device_scene.kd_layout().name();
  result.mesh_tree_bytes_per_triangle = double(device_scene.mesh_tree_bytes()) / scene.triangle_count();
  result.scene_device_bytes = device_scene.device_bytes();
  char layout[96];
  std::snprintf(layout, sizeof layout, ", kd nodes %s (mesh + kd-tree %.1f B/tri on the device)", result.kd_layout.c_str(),
                result.mesh_tree_bytes_per_triangle);
  result.configuration += layout;
  if (facing) result.configuration += facing_note;
  std::string build_options = device_scene.build_options();
  auto add_build_option = [&](const std::string& o) {
    if (!o.empty()) build_options += (build_options.empty() ? "" : " ") + o;
  };
  if (facing) add_build_option("-D TS_BENCH_SHADOW_FACING=1");
  if (options.schedule == "longest-first") add_build_option(group_clock_build_options(device));
  const cl::Program program = cl::build_program(device, "kernels/device/opencl/raytrace.cl", build_options);
  // Compiler output, e.g. register counts with TESSERA_CL_OPTIONS=-cl-nv-verbose on NVIDIA.
  if (!program.report().log.empty()) std::fprintf(stderr, "%s\n", program.report().log.c_str());
  cl::Buffer hits = budget.create("bench_hits", pixels * 16);
  cl::Buffer occluded = budget.create("bench_occluded", pixels * 4);
  cl::Buffer bounce = budget.create("bench_bounce_hits", pixels * 16);
  RayLaunches launches(device, budget, options);
  const cl::Range2D image{options.size, options.size}, group{options.local_x, options.local_y};
  cl::Buffer rays;
  if (stored) rays = budget.create("bench_rays", pixels * 32);
  // --rays stored: `store` (its arguments set) writes the rays once, untimed; then the median time of
  // the kernel that only traces them into `out`.
  auto time_stored = [&](const cl::Kernel& store, bool any_hit, const cl::Buffer& out) {
    cl::launch_2d(device, store, image, group).wait();
    cl::Kernel trace = program.kernel(any_hit ? "bench_trace_stored_any" : "bench_trace_stored_closest");
    cl_uint a = device_scene.set_scene_args(trace);
    trace.set_arg(a++, cl_uint(options.size));
    trace.set_arg(a++, cl_uint(options.size));
    trace.set_arg(a++, rays);
    trace.set_arg(a++, out);
    return time_launches([&] { return cl::launch_2d(device, trace, image, group); }, options.passes);
  };

  // CPU devices trace primary and shadow rays of 2 x 4 pixels as one packet (kernels/integrators/bench_rays.h);
  // persistent launches take the one-ray kernels.
  const bool blocks = cl::uses_cpu_paths(device) && launches.grid();
  const std::string block = blocks ? "_block" : "";
  const cl::Range2D block_items = blocks ? pixel_work_items(device, options.size, options.size) : image;
  // --costs-from-yaw: each kind's group order from one launch on the turned view (camera and hits
  // arguments at camera_arg, camera_arg + 1: the primary rays write the turned view's hits, which
  // the shadow and diffuse rays then start from), then the kernel's arguments back.
  cl::Buffer turned_hits;
  if (turned) turned_hits = budget.create("bench_turned_hits", pixels * 16);
  auto learn_from_turned_view = [&](cl::Kernel& kernel, cl_uint camera_arg, cl::Range2D items) {
    if (!turned) return;
    kernel.set_arg(camera_arg, *turned);
    kernel.set_arg(camera_arg + 1, turned_hits);
    launches.learn_order(kernel, items);
    kernel.set_arg(camera_arg, camera);
    kernel.set_arg(camera_arg + 1, hits);
  };
  cl::Kernel primary = program.kernel(stored ? "bench_store_primary_rays" : launches.kernel_name("bench_primary" + block));
  cl_uint arg = device_scene.set_scene_args(primary);
  const cl_uint primary_camera_arg = arg;
  primary.set_arg(arg++, camera);
  primary.set_arg(arg++, stored ? rays : hits);
  launches.finish_args(primary, arg);
  learn_from_turned_view(primary, primary_camera_arg, block_items);
  const double primary_ms = stored ? time_stored(primary, false, hits) : launches.time(primary, block_items);
  auto cost_map = [&](const cl::Kernel& kernel, const char* kind) {
    if (options.cost_map.empty()) return;
    result.cost_maps.push_back(cost_map_path(options, scene_path, kind));
    launches.write_cost_map(kernel, result.cost_maps.back());
  };
  cost_map(primary, "primary");
  const auto records = cl::read_buffer<cl_float4>(device, hits, pixels);
  const uint64_t hit_count = uint64_t(std::count_if(records.begin(), records.end(), [](const cl_float4& r) { return r.s[0] >= 0.0f; }));
  result.kinds.push_back({"primary", pixels, primary_ms, hash64_hex(hash64(records.data(), records.size() * sizeof(cl_float4)))});

  cl::Kernel shadow = program.kernel(stored ? "bench_store_shadow_rays" : launches.kernel_name("bench_shadow" + block));
  arg = device_scene.set_scene_args(shadow);
  const cl_uint shadow_camera_arg = arg;
  shadow.set_arg(arg++, camera);
  shadow.set_arg(arg++, hits);
  shadow.set_arg(arg++, light[0]);
  shadow.set_arg(arg++, light[1]);
  shadow.set_arg(arg++, light[2]);
  shadow.set_arg(arg++, stored ? rays : occluded);
  launches.finish_args(shadow, arg);
  learn_from_turned_view(shadow, shadow_camera_arg, block_items);
  const double shadow_ms = stored ? time_stored(shadow, true, occluded) : launches.time(shadow, block_items);
  cost_map(shadow, "shadow");
  result.kinds.push_back(shadow_kind_result(cl::read_buffer<uint32_t>(device, occluded, pixels), shadow_ms));

  // Octant order is a kernel of its own with its own work-group shape (persistent launches keep pixel order).
  const bool sorted = options.diffuse_order == "octant";
  cl::Kernel diffuse = program.kernel(stored   ? "bench_store_diffuse_rays"
                                     : sorted ? "bench_diffuse_sorted"
                                              : launches.kernel_name("bench_diffuse"));
  arg = device_scene.set_scene_args(diffuse);
  const cl_uint diffuse_camera_arg = arg;
  diffuse.set_arg(arg++, camera);
  diffuse.set_arg(arg++, hits);
  diffuse.set_arg(arg++, cl_uint(TS_BENCH_DIFFUSE_SEED));
  diffuse.set_arg(arg++, stored ? rays : bounce);
  double diffuse_ms = 0;
  if (stored) {
    diffuse_ms = time_stored(diffuse, false, bounce);
  } else if (sorted) {
    const cl::Range2D sort_group{options.sort_local_x, options.sort_local_y};
    diffuse_ms = time_launches([&] { return cl::launch_2d(device, diffuse, image, sort_group); }, options.passes);
  } else {
    launches.finish_args(diffuse, arg);
    learn_from_turned_view(diffuse, diffuse_camera_arg, image);
    diffuse_ms = launches.time(diffuse, image);
    cost_map(diffuse, "diffuse");
  }
  result.kinds.push_back({"diffuse", hit_count, diffuse_ms, records_hash<cl_float4>(device, bounce, pixels)});

  if (options.embree) result.embree = embree_trace(scene, camera, light, options, result.embree_note);
  return result;
}

nlohmann::json to_json(const RayBenchResult& r) {
  auto kinds = [](const std::vector<RayKindResult>& v) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& k : v)
    {
      out[k.kind] = {{"rays", k.rays}, {"median_ms", k.median_ms}, {"mrays_per_s", k.mrays_per_second()}};
      if (!k.hits_hash.empty()) out[k.kind]["hits_xxh64"] = k.hits_hash;
    }
    return out;
  };
  nlohmann::json j{{"scene", r.scene},
                   {"configuration", r.configuration},
                   {"device", r.device},
                   {"kernels", kinds(r.kinds)},
                   {"shadow_rays", r.shadow_rays},
                   {"scene_memory", r.scene_memory},
                   {"mesh_tree_bytes_per_triangle", r.mesh_tree_bytes_per_triangle},
                   {"scene_device_bytes", r.scene_device_bytes}};
  if (!r.kd_layout.empty()) {
    j["kd_layout"] = r.kd_layout;
    j["rays"] = r.ray_source;
    j["schedule"] = r.schedule;
    if (r.costs_from_yaw_degrees) j["costs_from_yaw_degrees"] = *r.costs_from_yaw_degrees;
    if (!r.cost_maps.empty()) j["cost_maps"] = r.cost_maps;
  }
  if (!r.embree.empty()) {
    j["embree"] = kinds(r.embree);
    nlohmann::json ratio = nlohmann::json::object();
    for (size_t i = 0; i < r.kinds.size() && i < r.embree.size(); ++i)
      ratio[r.kinds[i].kind] = r.kinds[i].mrays_per_second() / r.embree[i].mrays_per_second();
    j["ratio_to_embree"] = ratio;
  } else if (!r.embree_note.empty()) {
    j["embree"] = r.embree_note;
  }
  if (!r.stats.empty()) {
    nlohmann::json stats = nlohmann::json::object();
    for (const auto& s : r.stats) stats[s.kind] = to_json(s);
    j["traversal_per_ray"] = stats;
  }
  return j;
}

}  // namespace tessera::bench
