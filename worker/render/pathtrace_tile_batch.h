#pragma once
// `pathtrace` tile pairs rendered as one batch on an OpenCL device (the GPU code path): a launch
// traces its samples of every pixel of both eyes of every pair in one pair of kernels
// (pathtrace_primary_tiles, pathtrace_paths_tiles) over a tile list in device memory, and each
// pair's part is added to that pair's sums (PtDeviceSums); then each pair is resolved and read back
// on its own (small ones a few together) and handed over as soon as its pixels are on the host,
// while the device resolves the next ones. TESSERA_PT_WAVES=W (default 1) splits a batch of at least 2 W pairs into W waves
// traced one after another, each queued behind the previous one's reads, so that the first
// waves' pairs travel on while the device traces the later ones. Each pair's samples are the ones
// render_tile traces for it alone, added in the same order (reprojected samples, added
// atomically, excepted), so a tile gives the same pixels either way.
#include <span>
#include <vector>

#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/kernel.h"
#include "common/cl/program.h"
#include "worker/render/device_scene.h"
#include "worker/render/pathtrace_backend.h"
#include "worker/render/pathtrace_device_sums.h"

namespace tessera {

// Sets the arguments every pathtrace kernel starts with (kernels/device/opencl/pathtrace.cl: scene,
// shading, render settings, path tracer parameters, left and right camera); returns the next index.
cl_uint set_pathtrace_view_args(cl::Kernel& kernel, const DeviceScene& scene, const PtLaunch& launch,
                                const PathTraceParams& pt);

// TESSERA_PT_WAVES=W (1-64): waves a batch of at least 2 W pairs is traced in. 1 when unset or
// empty; throws Error on any other value.
uint32_t pathtrace_waves_from_environment();

class PathTraceTileBatch {
 public:
  // program: kernels/device/opencl/pathtrace.cl built for `device`. All must outlive this.
  PathTraceTileBatch(const cl::Device& device, cl::DeviceMemoryBudget& budget, const DeviceScene& scene,
                     const cl::Program& program, PathTraceDeviceAccumulator& accumulator);

  // PathTraceBackend::render_batch.
  void render(const PtLaunch& base, std::span<const PtBatchTileWork> tiles, uint32_t spp, uint32_t per_launch,
              const ResolveOptions& resolve, std::span<uint32_t> out, const StopRequested& stop,
              const PtBatchPairDone& on_pair_done);

 private:
  cl_uint set_common_args(cl::Kernel& kernel, const PtLaunch& base, const cl::Buffer& tiles, cl_uint tile_count,
                          cl_uint rows_per_tile, cl_uint sample);

  const cl::Device& device_;
  cl::DeviceMemoryBudget& budget_;
  const DeviceScene& scene_;
  PathTraceDeviceAccumulator& accumulator_;
  uint32_t persistent_groups_;  // TESSERA_PERSISTENT_GROUPS, 0: one work item a pixel
  uint32_t waves_;              // TESSERA_PT_WAVES
  cl::Kernel primary_, paths_;
  // Reused from batch to batch: the tile lists (one a wave), one launch's output, the resolve's,
  // the counters (and their copy on the host), the persistent work-groups' counters.
  std::vector<cl::Buffer> tiles_;
  cl::Buffer own_, reproj_, primaries_, mean_, linear_, rgba_, partials_, group_counters_;
  std::vector<uint32_t> host_partials_;
};

}  // namespace tessera
