#pragma once
// The devices that trace `pathtrace` samples: OpenCL (a GPU, or PoCL on the CPU) and the host
// build of the same kernels. A launch traces some samples of every pixel of both eyes of one tile
// into a PtBatch, or, on OpenCL with the tile's sums on the device (make_sums), adds them to those
// sums there. submit() only starts the work where the device runs on its own (OpenCL: the kernels
// and a non-blocking read-back are queued), so the thread that merges can keep the device busy
// with the next launch while it merges the previous one; collect() waits for the launch.
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/scene/packed_scene.h"
#include "common/scene/top_level_bvh.h"
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

// A tile pair of a batch (render_batch).
struct PtBatchTileWork {
  TileRect rect;                 // the same rectangle in both eyes
  PtDeviceSums* sums = nullptr;  // the tile's sums, on this device
  uint32_t first_sample = 0;     // sample index of the batch's first sample in this tile
  uint64_t offset = 0;           // the pair's first pixel in the batch's output: eye 0's pixels, then eye 1's
};

// A pair of a batch, handed over as soon as its pixels are on the host (render_batch).
struct PtBatchPair {
  size_t index = 0;                   // into the batch's tiles
  std::span<const uint32_t> pixels;   // its pixels in the batch's output: eye 0's, then eye 1's
  std::vector<PtBatchTotals> merged;  // what each launch added to its sums
  size_t median_pixels = 0;           // pixels the noise removal replaced
  double kernel_ms = 0;               // its pixels' share of the tracing kernels' device time
  double merge_ms = 0;                // device time of adding its launches to its sums
  double resolve_ms = 0;              // from its resolve's first kernel to its pixels on the host (device clock)
};
using PtBatchPairDone = std::function<void(const PtBatchPair& pair)>;

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
  // The lights the kernels read from the next launch on.
  virtual void set_lights(std::span<const LightGpu> lights) = 0;
  // An instanced scene's instances (and their emitters) as placed from the next launch on
  // (SceneMotion::top_level()); nothing for a single-level scene.
  virtual void place_instances(const TopLevelBvh& top) = 0;

  // True where render_batch renders many tile pairs in one launch per launch of samples (OpenCL
  // devices on the GPU code path; the others go tile by tile, where a batch would save nothing).
  virtual bool launches_batches() const { return false; }
  // Traces `spp` samples of every pixel of both eyes of every tile pair, per_launch samples a
  // launch, adds each launch to each tile's sums and resolves the tiles into `out` (every pair at
  // its offset; out[0, end of the last pair) is written). Each pair's pixels are read back on
  // their own, and each pair goes to `on_pair_done` once they are on the host, in the order of
  // `tiles`, while the device goes on with the following pairs. `base` gives the settings, cameras
  // and estimate (its tile and sample fields are ignored). `stop` is polled between launches:
  // when it says so, RenderCanceled is thrown once the device is idle.
  virtual void render_batch(const PtLaunch& base, std::span<const PtBatchTileWork> tiles, uint32_t spp, uint32_t per_launch,
                            const ResolveOptions& resolve, std::span<uint32_t> out, const StopRequested& stop,
                            const PtBatchPairDone& on_pair_done);
};

// Bytes of a first hit (PtPrimary) in the programs that trace `instanced` or single-level scenes:
// only an instanced scene's carry the instance slot (OpenCL programs of single-level scenes keep 16).
inline size_t pt_primary_bytes(bool instanced) { return instanced ? sizeof(PtPrimary) : offsetof(PtPrimary, inst); }

// device "host": the host backend on host_threads threads (0 = all cores); else OpenCL.
std::unique_ptr<PathTraceBackend> make_pathtrace_backend(const PackedScene& scene, const RendererOptions& options);

}  // namespace tessera
