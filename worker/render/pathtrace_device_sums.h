#pragma once
// `pathtrace` tile sums in OpenCL device memory (PtDeviceSums): the kernels of
// kernels/device/opencl/pathtrace_accumulate.cl add each launch where it was traced and resolve
// the tile there, so a frame moves only its RGBA8 pixels (and a few counters) to the host.
// Commands go to the device's in-order queue: a merge or resolve runs after the launches queued
// before it, and the scratch buffers below are reused only after the commands that read them.
#include <memory>
#include <span>
#include <vector>

#include "common/cl/commands.h"
#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/program.h"
#include "worker/render/pathtrace_accumulation.h"

namespace tessera {

// The counters of a merge from its work groups' partials (TS_PT_TOTALS words a group).
PtBatchTotals sum_partials(std::span<const uint32_t> partials);

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

  // A tile of a batch (pathtrace_tile_batch.h), whose buffers hold many tiles one after another:
  // queues sums += (own, reproj) from pixel `first` on, its counters into `partials` from work
  // group `first_group` on (groups(pixels) groups of TS_PT_TOTALS words); nothing is read back.
  cl::Event merge_at(PtDeviceSums& sums, const cl::Buffer& own, const cl::Buffer& reproj, size_t pixels, size_t first,
                     const cl::Buffer& partials, size_t first_group);
  // Queues the resolve of `sums` into mean (scratch), linear and rgba from pixel `first` on; the
  // median pixels are counter 0 of `partials`' groups from `first_group` on. Returns the event of
  // its first kernel.
  cl::Event resolve_at(PtDeviceSums& sums, const ResolveOptions& options, const TileRect& rect, uint32_t eye_count,
                  const cl::Buffer& mean, const cl::Buffer& linear, const cl::Buffer& rgba, size_t first,
                  const cl::Buffer& partials, size_t first_group);
  // Work groups of a merge or resolve over `pixels` pixels.
  static size_t groups(size_t pixels);
  void clear(const cl::Buffer& buffer);
  cl::Buffer create(const char* name, uint64_t bytes) { return budget_.create(name, bytes); }
  const cl::Device& device() const { return device_; }

 private:
  static const cl::Buffer& buffer_of(PtDeviceSums& sums);

  const cl::Device& device_;
  cl::DeviceMemoryBudget& budget_;
  cl::Program program_;
  cl::Kernel merge_, mean_, resolve_;
  cl::Buffer thresholds_;
  cl::Buffer partials_, upload_own_, upload_reproj_, mean_buffer_, linear_, rgba_;
};

}  // namespace tessera
