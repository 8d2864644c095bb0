#include "worker/render/opencl_tile_renderer.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <vector>

#include "common/base/error.h"
#include "common/cl/commands.h"
#include "common/cl/pinned_memory.h"
#include "worker/render/batch_launch_list.h"
#include "worker/render/pixel_work_items.h"

namespace tessera {
namespace {

constexpr size_t kLocal = 8;  // 8 x 8 work-groups: small tiles still fill them

constexpr size_t kPinnedKept = 4;  // pinned buffers kept for reuse (batches encoding at once)

}  // namespace

struct OpenClTileRenderer::PinnedPool {
  std::mutex mutex;
  std::vector<cl::PinnedHostMemory> free;
};

namespace {

// Pinned memory on loan from the pool; goes back when the encoders are done with it.
struct PinnedPixels final : HostPixels {
  cl::PinnedHostMemory memory;
  std::weak_ptr<void> pool_alive;
  void* pool = nullptr;
};

}  // namespace

OpenClTileRenderer::OpenClTileRenderer(const PackedScene& scene, const std::string& device_spec,
                                       std::optional<uint64_t> memory_limit, SceneMemory scene_memory)
    : device_(cl::Device::open(device_spec)),
      budget_(device_, memory_limit),
      scene_(device_, budget_, scene, kd_node_layout_from_environment(), scene_memory),
      program_(cl::build_program(device_, "kernels/device/opencl/raytrace.cl", scene_.build_options())),
      kernel_(program_.kernel("raytrace_tile")),
      aux_kernel_(program_.kernel("primary_aux_tiles")),
      pinned_(std::make_shared<PinnedPool>()) {
  if (!cl::uses_cpu_paths(device_)) batch_kernel_.emplace(program_.kernel("raytrace_tiles"));
}

std::string OpenClTileRenderer::description() const {
  return device_.info().name + " (OpenCL, " + device_.info().platform_name + ")";
}

cl::Buffer& OpenClTileRenderer::output_buffer(uint64_t bytes) {
  budget_.ensure(output_, "tile_output", bytes, cl::BufferAccess::write_only);
  return output_;
}

void OpenClTileRenderer::render_raytrace(const CameraParams& camera, const RenderSettings& settings, const TileRect& tile,
                                         std::span<uint32_t> out) {
  const uint64_t bytes = uint64_t(tile.width) * tile.height * 4;
  cl::Buffer& output = output_buffer(bytes);
  cl_uint arg = scene_.set_scene_args(kernel_, 0);
  arg = scene_.set_shading_args(kernel_, arg);
  kernel_.set_arg(arg++, settings);
  kernel_.set_arg(arg++, camera);
  kernel_.set_arg(arg++, cl_uint(tile.x0));
  kernel_.set_arg(arg++, cl_uint(tile.y0));
  kernel_.set_arg(arg++, cl_uint(tile.width));
  kernel_.set_arg(arg++, cl_uint(tile.height));
  kernel_.set_arg(arg++, output);
  const cl::Event run =
      cl::launch_2d(device_, kernel_, pixel_work_items(device_, tile.width, tile.height), {kLocal, kLocal});
  cl::read_buffer(device_, output, out.data(), bytes);
  last_kernel_ms_ = run.timing().run_ms();
}

}  // namespace tessera

namespace tessera {

std::shared_ptr<HostPixels> OpenClTileRenderer::host_pixels(size_t count) {
  const size_t bytes = std::max<size_t>(count, 1) * 4;
  cl::PinnedHostMemory memory;
  {
    std::lock_guard lock(pinned_->mutex);
    auto& free = pinned_->free;
    const auto fits = std::find_if(free.begin(), free.end(), [&](const auto& m) { return m.size() >= bytes; });
    if (fits != free.end()) {
      memory = std::move(*fits);
      free.erase(fits);
    }
  }
  if (!memory.data()) memory = cl::PinnedHostMemory(device_, bytes);
  const std::weak_ptr<PinnedPool> pool = pinned_;
  auto* loan = new PinnedPixels;
  loan->memory = std::move(memory);
  loan->pixels = {reinterpret_cast<uint32_t*>(loan->memory.data()), count};
  return std::shared_ptr<HostPixels>(loan, [pool](HostPixels* p) {
    auto* pixels = static_cast<PinnedPixels*>(p);
    if (const auto alive = pool.lock()) {
      std::lock_guard lock(alive->mutex);
      if (alive->free.size() < kPinnedKept) alive->free.push_back(std::move(pixels->memory));
    }
    delete pixels;
  });
}

BatchTiming OpenClTileRenderer::render_raytrace_batch(const std::array<CameraParams, 2>& cameras, const RenderSettings& settings,
                                                      std::span<const BatchTile> tiles, std::span<uint32_t> out,
                                                      const StopRequested& stop) {
  // CPU devices render a tile per launch: on PoCL one launch over many tiles measured 3-4 times
  // slower than the same pixels in tile-sized launches (as does one large tile), while a GPU
  // needs the large launch to fill.
  if (!batch_kernel_) return TileRenderer::render_raytrace_batch(cameras, settings, tiles, out, stop);
  if (tiles.empty()) return {};
  if (stop && stop()) throw RenderCanceled();
  cl::Kernel& batch_kernel = *batch_kernel_;
  const BatchLaunchList list = batch_launch_list(tiles, out.size());
  const uint64_t total = list.pixels;
  const auto start = std::chrono::steady_clock::now();
  budget_.ensure(tile_list_, "tile_list", list.words.size() * sizeof(cl_uint), cl::BufferAccess::read_only);
  cl::write_buffer(device_, tile_list_, list.words);
  cl::Buffer& output = output_buffer(total * 4);
  const cl::Range2D per_tile = pixel_work_items(device_, list.max_width, list.max_height);
  cl_uint arg = scene_.set_scene_args(batch_kernel, 0);
  arg = scene_.set_shading_args(batch_kernel, arg);
  batch_kernel.set_arg(arg++, settings);
  batch_kernel.set_arg(arg++, cameras[0]);
  batch_kernel.set_arg(arg++, cameras[1]);
  batch_kernel.set_arg(arg++, tile_list_);
  batch_kernel.set_arg(arg++, cl_uint(tiles.size()));
  batch_kernel.set_arg(arg++, cl_uint(per_tile.y));
  batch_kernel.set_arg(arg++, output);
  const cl::Event run =
      cl::launch_2d(device_, batch_kernel, {per_tile.x, per_tile.y * tiles.size()}, {kLocal, kLocal});
  // The readback queues behind the launch; waiting on it waits for both.
  const cl::Event read = cl::read_buffer_async(device_, output, out.data(), total * 4);
  read.wait();
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const cl::EventTiming launch = run.timing(), copy = read.timing();
  last_kernel_ms_ = launch.run_ms();
  BatchTiming timing;
  timing.readback_ms = copy.run_ms();
  timing.launch_ms = std::max(0.0, wall_ms - timing.readback_ms);
  return timing;
}

void OpenClTileRenderer::set_sun(const std::optional<SunOverride>& sun) {
  if (sun == sun_) return;
  sun_ = sun;
  scene_.set_lights(device_, budget_, lights_with_sun(scene_.scene_lights(), sun));
}

BatchTiming OpenClTileRenderer::render_aux_batch(const std::array<CameraParams, 2>& cameras, const RenderSettings& settings,
                                                 const AuxSettings& aux, std::span<const BatchTile> tiles,
                                                 std::span<uint32_t> out, const StopRequested& stop) {
  if (tiles.empty()) return {};
  if (stop && stop()) throw RenderCanceled();
  const BatchLaunchList list = batch_launch_list(tiles, out.size());
  const auto start = std::chrono::steady_clock::now();
  budget_.ensure(tile_list_, "tile_list", list.words.size() * sizeof(cl_uint), cl::BufferAccess::read_only);
  cl::write_buffer(device_, tile_list_, list.words);
  budget_.ensure(aux_output_, "aux_output", list.pixels * 4, cl::BufferAccess::write_only);
  cl_uint arg = scene_.set_scene_args(aux_kernel_, 0);
  arg = scene_.set_shading_args(aux_kernel_, arg);
  aux_kernel_.set_arg(arg++, settings);
  aux_kernel_.set_arg(arg++, aux);
  aux_kernel_.set_arg(arg++, cameras[0]);
  aux_kernel_.set_arg(arg++, cameras[1]);
  aux_kernel_.set_arg(arg++, tile_list_);
  aux_kernel_.set_arg(arg++, cl_uint(tiles.size()));
  aux_kernel_.set_arg(arg++, cl_uint(list.max_height));
  aux_kernel_.set_arg(arg++, aux_output_);
  const cl::Event run = cl::launch_2d(device_, aux_kernel_, {list.max_width, size_t(list.max_height) * tiles.size()},
                                      {kLocal, kLocal});
  const cl::Event read = cl::read_buffer_async(device_, aux_output_, out.data(), list.pixels * 4);
  read.wait();
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  BatchTiming timing;
  timing.readback_ms = read.timing().run_ms();
  timing.launch_ms = std::max(0.0, wall_ms - timing.readback_ms);
  return timing;
}

}  // namespace tessera
