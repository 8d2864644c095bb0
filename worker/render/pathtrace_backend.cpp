#include "worker/render/pathtrace_backend.h"

#include <optional>
#include <thread>
#include <vector>

#include "common/base/error.h"
#include "common/cl/commands.h"
#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/program.h"
#include "common/render/shading_data.h"
#include "common/scene/scene_motion.h"
#include "kernels/device/cpu/pathtrace_cpu.h"
#include "worker/render/device_scene.h"
#include "worker/render/host_instances.h"
#include "worker/render/pathtrace_device_sums.h"
#include "worker/render/pathtrace_registers.h"
#include "worker/render/pathtrace_tile_batch.h"
#include "worker/render/persistent_launch.h"

namespace tessera {
namespace {

class HostPathTraceBackend final : public PathTraceBackend {
 public:
  HostPathTraceBackend(const PackedScene& scene, unsigned threads, SceneMemory memory)
      : view_(scene.host_view(memory)), shading_(ShadingData::build(scene)), context_(shading_.host_context()), threads_(threads) {
    if (scene.instanced()) {  // placed as packed (time 0) until told otherwise
      instances_.emplace(scene, shading_);
      place_instances(SceneMotion::of_scene(scene, "scene")->top_level());
    }
  }
  std::string description() const override {
    const unsigned n = threads_ ? threads_ : std::max(1u, std::thread::hardware_concurrency());
    return "host (kernels compiled for the CPU, " + std::to_string(n) + " threads)";
  }
  uint64_t scene_device_bytes() const override { return 0; }
  bool is_opencl() const override { return false; }
  std::unique_ptr<PtDeviceSums> make_sums(size_t) override { return nullptr; }
  void submit(int slot, const PtLaunch& launch, PtBatch& out, PtDeviceSums* sums) override {
    if (sums) throw Error("pathtrace: the host backend keeps no device sums");
    pending_[slot] = launch;
    out_[slot] = &out;
  }
  PtCollected collect(int slot) override {
    PtBatch& out = *out_[slot];
    const PtLaunch& l = pending_[slot];
    out.resize(size_t(l.pt.tile_w) * l.pt.tile_h, l.pt.eye_count);
    cpu::pathtrace_tile(view_, context_, l.settings, l.pt, l.left, l.right, out.own, out.reproj, threads_);
    return {};
  }
  void set_lights(std::span<const LightGpu> lights) override {
    shading_.lights.assign(lights.begin(), lights.end());
    context_ = shading_.host_context();
  }
  void place_instances(const TopLevelBvh& top) override {
    if (!instances_) return;
    instances_->place(top, view_, shading_);
    context_ = shading_.host_context();
  }

 private:
  SceneView view_;
  ShadingData shading_;
  std::optional<HostInstances> instances_;  // an instanced scene's, as placed last
  ShadingContext context_;
  unsigned threads_;
  PtLaunch pending_[kSlots]{};
  PtBatch* out_[kSlots]{};
};

constexpr size_t kLocal = 8;

class OpenClPathTraceBackend final : public PathTraceBackend {
 public:
  OpenClPathTraceBackend(const PackedScene& scene, const RendererOptions& options)
      : device_(cl::Device::open(options.device)),
        budget_(device_, options.gpu_memory_limit),
        scene_(device_, budget_, scene, kd_node_layout_from_environment(), options.scene_memory),
        program_(cl::build_program(device_, "kernels/device/opencl/pathtrace.cl",
                                   pathtrace_build_options(device_.info(), scene_.build_options()))),
        persistent_groups_(persistent_groups_from_environment()),
        primary_(program_.kernel("pathtrace_primary")),
        paths_(program_.kernel(persistent_groups_ ? "pathtrace_paths_persistent" : "pathtrace_paths")),
        clear_(program_.kernel("pathtrace_clear")),
        accumulator_(device_, budget_) {
    if (!cl::uses_cpu_paths(device_)) batch_.emplace(device_, budget_, scene_, program_, accumulator_);
  }

  std::string description() const override {
    return device_.info().name + " (OpenCL, " + device_.info().platform_name + ")";
  }
  uint64_t scene_device_bytes() const override { return scene_.device_bytes(); }
  bool is_opencl() const override { return true; }
  std::unique_ptr<PtDeviceSums> make_sums(size_t pixels) override { return accumulator_.make_sums(pixels); }
  void set_lights(std::span<const LightGpu> lights) override { scene_.set_lights(device_, budget_, lights); }
  void place_instances(const TopLevelBvh& top) override { scene_.place_instances(device_, budget_, top); }

  void submit(int slot, const PtLaunch& l, PtBatch& out, PtDeviceSums* sums) override {
    Slot& s = slots_[slot];
    const size_t pixels = size_t(l.pt.tile_w) * l.pt.tile_h * l.pt.eye_count;
    const uint64_t own_bytes = pixels * sizeof(PtPixelOut), reproj_bytes = pixels * 4 * sizeof(float);
    ensure(s.own, "pathtrace_own_", slot, own_bytes);
    ensure(s.reproj, "pathtrace_reproj_", slot, reproj_bytes);
    ensure(s.primaries, "pathtrace_primaries_", slot, pixels * pt_primary_bytes(scene_.scene().instanced()));
    clear(s.own, own_bytes);
    clear(s.reproj, reproj_bytes);
    if (persistent_groups_) {  // one group counter a sample
      ensure(s.counters, "pathtrace_group_counters_", slot, uint64_t(l.pt.samples) * 4);
      clear(s.counters, uint64_t(l.pt.samples) * 4);
    }
    const size_t rows = size_t(l.pt.tile_h) * l.pt.eye_count;
    const cl::Range2D global{(l.pt.tile_w + kLocal - 1) / kLocal * kLocal, (rows + kLocal - 1) / kLocal * kLocal};
    s.kernels.clear();
    for (uint32_t k = 0; k < l.pt.samples; ++k) {  // a sample: first hits of both eyes, then the paths
      PathTraceParams p = l.pt;
      p.first_sample = l.pt.first_sample + k;
      p.samples = 1;
      cl_uint arg = set_pathtrace_view_args(primary_, scene_, l, p);
      primary_.set_arg(arg++, s.primaries);
      primary_.set_arg(arg++, s.own);
      s.kernels.push_back(cl::launch_2d(device_, primary_, global, {kLocal, kLocal}));
      arg = set_pathtrace_view_args(paths_, scene_, l, p);
      paths_.set_arg(arg++, s.primaries);
      paths_.set_arg(arg++, s.own);
      paths_.set_arg(arg++, s.reproj);
      if (persistent_groups_) {
        paths_.set_arg(arg++, s.counters);
        paths_.set_arg(arg++, cl_uint(k));
      }
      s.kernels.push_back(cl::launch_2d(
          device_, paths_, persistent_groups_ ? persistent_range(device_, {kLocal, kLocal}, persistent_groups_) : global,
          {kLocal, kLocal}));
    }
    s.on_device = sums != nullptr;
    if (s.on_device) {
      s.merge = accumulator_.merge(*sums, s.own, s.reproj, pixels);
    } else {
      out.resize(size_t(l.pt.tile_w) * l.pt.tile_h, l.pt.eye_count);
      s.read_own = cl::read_buffer_async(device_, s.own, out.own.data(), own_bytes);
      s.read_reproj = cl::read_buffer_async(device_, s.reproj, out.reproj.data(), reproj_bytes);
    }
    device_.flush();
  }

  bool launches_batches() const override { return batch_.has_value(); }
  void render_batch(const PtLaunch& base, std::span<const PtBatchTileWork> tiles, uint32_t spp, uint32_t per_launch,
                    const ResolveOptions& resolve, std::span<uint32_t> out, const StopRequested& stop,
                    const PtBatchPairDone& on_pair_done) override {
    if (!batch_) return PathTraceBackend::render_batch(base, tiles, spp, per_launch, resolve, out, stop, on_pair_done);
    batch_->render(base, tiles, spp, per_launch, resolve, out, stop, on_pair_done);
  }

  PtCollected collect(int slot) override {
    Slot& s = slots_[slot];
    PtCollected c;
    if (s.on_device) {
      c.totals = s.merge.wait();
      c.merge_ms = s.merge.kernel.timing().run_ms();
    } else {
      s.read_own.wait();
      s.read_reproj.wait();
    }
    for (const cl::Event& e : s.kernels) c.kernel_ms += e.timing().run_ms();
    return c;
  }

 private:
  struct Slot {
    cl::Buffer own, reproj, primaries, counters;
    std::vector<cl::Event> kernels;
    bool on_device = false;  // added to device sums rather than read back
    PtPendingMerge merge;
    cl::Event read_own, read_reproj;
  };

  void ensure(cl::Buffer& buffer, const char* name, int slot, uint64_t bytes) {
    budget_.ensure(buffer, name + std::to_string(slot), bytes);
  }

  void clear(const cl::Buffer& buffer, uint64_t bytes) {
    const cl_uint words = cl_uint(bytes / 4);
    clear_.set_arg(0, buffer);
    clear_.set_arg(1, words);
    cl::launch_2d(device_, clear_, {words, 1});
  }

  cl::Device device_;
  cl::DeviceMemoryBudget budget_;
  DeviceScene scene_;
  cl::Program program_;
  uint32_t persistent_groups_;  // TESSERA_PERSISTENT_GROUPS, 0: one work item a pixel
  cl::Kernel primary_, paths_, clear_;
  PathTraceDeviceAccumulator accumulator_;
  // GPU code path only: CPU devices go tile by tile, as the other modes' batches do there, while a
  // GPU needs the large launch to fill (and saves a read-back per tile).
  std::optional<PathTraceTileBatch> batch_;
  Slot slots_[kSlots];
};

}  // namespace

void PathTraceBackend::render_batch(const PtLaunch&, std::span<const PtBatchTileWork>, uint32_t, uint32_t,
                                    const ResolveOptions&, std::span<uint32_t>, const StopRequested&,
                                    const PtBatchPairDone&) {
  throw Error("pathtrace: " + description() + " renders tile by tile");
}

std::unique_ptr<PathTraceBackend> make_pathtrace_backend(const PackedScene& scene, const RendererOptions& options) {
  if (options.device == "host") return std::make_unique<HostPathTraceBackend>(scene, options.host_threads, options.scene_memory);
  return std::make_unique<OpenClPathTraceBackend>(scene, options);
}

}  // namespace tessera
