#include "worker/render/opencl_tile_renderer.h"

#include "common/cl/commands.h"
#include "worker/render/pixel_work_items.h"

namespace tessera {
namespace {

constexpr size_t kLocal = 8;  // 8 x 8 work-groups: small tiles still fill them

}  // namespace

OpenClTileRenderer::OpenClTileRenderer(const PackedScene& scene, const std::string& device_spec,
                                       std::optional<uint64_t> memory_limit)
    : device_(cl::Device::open(device_spec)),
      budget_(device_, memory_limit),
      scene_(device_, budget_, scene),
      program_(cl::build_program(device_, "kernels/device/opencl/raytrace.cl")),
      kernel_(program_.kernel("raytrace_tile")) {}

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
