#pragma once
// `pathtrace` tile sums in OpenCL device memory (PtDeviceSums): the kernels of
// kernels/device/opencl/pathtrace_accumulate.cl add each launch where it was traced and resolve
// the tile there, so a frame moves only its RGBA8 pixels (and a few counters) to the host.
// Commands go to the device's in-order queue: a merge or resolve runs after the launches queued
// before it, and the scratch buffers below are reused only after the commands that read them.
#include <memory>
#include <vector>

#include "common/cl/commands.h"
#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/program.h"
#include "worker/render/pathtrace_accumulation.h"

namespace tessera {

// A queued merge: its counters come back without blocking the queue.
struct PtPendingMerge {
  cl::Event kernel, read;
  std::vector<uint32_t> partials;  // TS_PT_TOTALS per work group
  PtBatchTotals wait();            // waits for the read and adds the groups up
};

// The kernels and scratch buffers every tile's sums share. Sums it makes must not outlive it.
class PathTraceDeviceAccumulator {
 public:
  PathTraceDeviceAccumulator(const cl::Device& device, cl::DeviceMemoryBudget& budget);

  std::unique_ptr<PtDeviceSums> make_sums(size_t pixels);

  // Queues sums += (own, reproj) over `pixels` pixels (the kernels' PtPixelOut and float4
  // layouts) and the read-back of its counters. `sums` must come from make_sums.
  PtPendingMerge merge(PtDeviceSums& sums, const cl::Buffer& own, const cl::Buffer& reproj, size_t pixels);
  PtPendingMerge merge(const cl::Buffer& sums, const cl::Buffer& own, const cl::Buffer& reproj, size_t pixels);
  // Uploads a host batch into the scratch buffers and merges it; blocks.
  PtBatchTotals merge(const cl::Buffer& sums, const PtBatch& batch);
  PtResolved resolve(const cl::Buffer& sums, const ResolveOptions& options, const TileRect& rect, uint32_t eye_count,
                     bool want_linear);
  void clear(const cl::Buffer& buffer);
  cl::Buffer create(const char* name, uint64_t bytes) { return budget_.create(name, bytes); }
  const cl::Device& device() const { return device_; }

 private:

  const cl::Device& device_;
  cl::DeviceMemoryBudget& budget_;
  cl::Program program_;
  cl::Kernel merge_, mean_, resolve_;
  cl::Buffer thresholds_;
  cl::Buffer partials_, upload_own_, upload_reproj_, mean_buffer_, linear_, rgba_;
};

}  // namespace tessera
