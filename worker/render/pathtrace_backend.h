#pragma once
// The devices that trace `pathtrace` samples: OpenCL (a GPU, or PoCL on the CPU) and the host
// build of the same kernels. A launch traces some samples of every pixel of both eyes of one tile
// into a PtBatch. submit() only starts the work where the device runs on its own (OpenCL: the
// kernel and a non-blocking read-back are queued), so the thread that merges can keep the device
// busy with the next launch while it merges the previous one; collect() waits for the batch.
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

class PathTraceBackend {
 public:
  static constexpr int kSlots = 2;  // launches that may be in flight at once
  virtual ~PathTraceBackend() = default;
  virtual std::string description() const = 0;
  virtual uint64_t scene_device_bytes() const = 0;
  virtual bool is_opencl() const = 0;
  // `out` must stay alive and untouched until collect(slot) returns.
  virtual void submit(int slot, const PtLaunch& launch, PtBatch& out) = 0;
  // Waits for the slot's launch; returns the device milliseconds of its kernel (0 on the host).
  virtual double collect(int slot) = 0;
};

// device "host": the host backend on host_threads threads (0 = all cores); else OpenCL.
std::unique_ptr<PathTraceBackend> make_pathtrace_backend(const PackedScene& scene, const RendererOptions& options);

}  // namespace tessera
