#pragma once
// The devices that trace `pathtrace` samples: OpenCL (a GPU, or PoCL on the CPU) and the host
// build of the same kernels. A launch traces some samples of every pixel of both eyes of one tile
// into a PtBatch, or, on OpenCL with the tile's sums on the device (make_sums), adds them to those
// sums there. submit() only starts the work where the device runs on its own (OpenCL: the kernels
// and a non-blocking read-back are queued), so the thread that merges can keep the device busy
// with the next launch while it merges the previous one; collect() waits for the launch.
#include <memory>
#include <string>

#include "common/scene/packed_scene.h"
#include "worker/render/pathtrace_accumulation.h"
#include "worker/render/tile_renderer.h"

namespace tessera {

struct PtLaunch {
  PathTraceParams pt{};        // tile, samples, first sample, features
  RenderSettings settings{};
  CameraParams left{}, right{};  // right unused in mono
};

struct PtCollected {
  double kernel_ms = 0;  // device time of the tracing kernels (0 on the host backend)
  double merge_ms = 0;   // device time of adding the launch to device sums
  PtBatchTotals totals;  // what was added to device sums (nothing when the launch went to a PtBatch)
};

class PathTraceBackend {
 public:
  static constexpr int kSlots = 2;  // launches that may be in flight at once
  virtual ~PathTraceBackend() = default;
  virtual std::string description() const = 0;
  virtual uint64_t scene_device_bytes() const = 0;
  virtual bool is_opencl() const = 0;
  // Sums of a tile of `pixels` pixels (both eyes) in the device's memory, or nullptr where the
  // backend keeps none (host). They must not outlive the backend.
  virtual std::unique_ptr<PtDeviceSums> make_sums(size_t pixels) = 0;
  // With `sums` (from make_sums) the launch is added to them on the device and `out` is left
  // alone; else its samples land in `out`, which must stay alive until collect(slot) returns.
  virtual void submit(int slot, const PtLaunch& launch, PtBatch& out, PtDeviceSums* sums = nullptr) = 0;
  // Waits for the slot's launch.
  virtual PtCollected collect(int slot) = 0;
};

// device "host": the host backend on host_threads threads (0 = all cores); else OpenCL.
std::unique_ptr<PathTraceBackend> make_pathtrace_backend(const PackedScene& scene, const RendererOptions& options);

}  // namespace tessera
