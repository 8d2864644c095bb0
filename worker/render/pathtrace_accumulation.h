#pragma once
// Progressive accumulation of a stereo tile pair in the `pathtrace` mode. The worker that owns a
// tile keeps its samples while the view (both eyes' cameras, the gaze point) and the settings that
// shape the estimate stay the same; any change resets it (AccumulationKey). Batches of samples
// from the GPU and from CPU helper threads are merged into it on one thread (Algorithm 1 of Kim &
// Sung 2021), and it resolves into pixels with the noise removal of §3.4 (Algorithm 5 lines 9-14).
// The per-pixel sums live in host memory, or on the OpenCL device that traces the tile
// (PtDeviceSums), so that launches never travel to the host and only pixels come back.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "common/image/image.h"
#include "kernels/device/cpu/raytrace_cpu.h"
#include "kernels/integrators/pathtrace_accumulate.h"
#include "kernels/shading/shading_context.h"

namespace tessera {

using TileRect = cpu::TileRect;

// Everything that decides what a sample estimates. Compared bytewise; built by make_key.
struct AccumulationKey {
  CameraParams eyes[2]{};
  uint32_t eye_count = 0;
  float gaze_x = 0, gaze_y = 0;  // pixels
  uint32_t features = 0, depth_threshold = 0, rr_depth = 0;
  float p_max = 0, indirect_clamp = 0;
  RenderSettings settings{};  // exposure zeroed: it only scales the resolved pixels
  bool operator==(const AccumulationKey& other) const;
};

AccumulationKey make_key(const CameraParams* eyes, uint32_t eye_count, const PathTraceParams& pt,
                         const RenderSettings& settings);

// One launch's (or one CPU helper's) samples of a tile pair: the kernels' output layout.
struct PtBatch {
  std::vector<PtPixelOut> own;  // per pixel and eye, eye-major
  std::vector<float> reproj;    // r, g, b, count per pixel and eye
  void resize(size_t pixels_per_eye, uint32_t eye_count);
  // Adds another batch of the same tile pixel by pixel; returns its own samples.
  uint64_t add(const PtBatch& other);
  bool empty() const { return own.empty(); }
};

// Counters of the batches added to a tile (TS_PT_TOTAL_* of kernels/integrators/pathtrace_accumulate.h).
struct PtBatchTotals {
  uint64_t own_samples = 0, reprojected = 0, segments = 0, stopped = 0;
  PtBatchTotals& operator+=(const PtBatchTotals& o);
};

struct ResolveOptions {
  float exposure = 1.0f;
  bool median = false;              // §3.4 noise removal
  uint32_t median_max_samples = 1;  // only while a pixel holds at most this many own samples
};
PtResolveParams resolve_params(const ResolveOptions& options, const TileRect& rect, uint32_t eye_count);

// A tile's pixels after resolve.
struct PtResolved {
  std::array<std::vector<uint32_t>, 2> eyes;  // RGBA8 words (red in the low byte), tile rows
  std::array<std::vector<float>, 2> linear;   // linear rgb per pixel, when asked for
  size_t median_pixels = 0;                   // pixels the noise removal replaced (all eyes)
};

// The per-pixel sums of one tile pair kept in a device's memory (PtPixelAccum per pixel and eye,
// eye-major). Made by the backend that traces into them (pathtrace_backend.h).
class PtDeviceSums {
 public:
  virtual ~PtDeviceSums() = default;
  virtual size_t pixels() const = 0;  // both eyes
  virtual void clear() = 0;
  // Uploads a host batch (CPU helpers) and adds it; returns its counters.
  virtual PtBatchTotals merge(const PtBatch& batch) = 0;
  virtual PtResolved resolve(const ResolveOptions& options, const TileRect& rect, uint32_t eye_count,
                             bool want_linear) = 0;
  virtual std::vector<PtPixelAccum> read() = 0;
};

class TileAccumulation {
 public:
  // With `sums` the per-pixel sums live on that device (zeroed here), else in host memory.
  TileAccumulation(const AccumulationKey& key, const TileRect& rect, std::unique_ptr<PtDeviceSums> sums = nullptr);

  const AccumulationKey& key() const { return key_; }
  const TileRect& rect() const { return rect_; }
  uint32_t eye_count() const { return key_.eye_count; }
  size_t pixels_per_eye() const { return size_t(rect_.width) * rect_.height; }

  // Sample indices handed out so far (the RNG of a sample depends on its index, so every batch
  // takes fresh ones): the GPU (or the host backend) counts from 0, CPU helpers from kHelperBase.
  static constexpr uint32_t kHelperBase = 1u << 30;
  uint32_t take_samples(uint32_t count);
  uint32_t next_helper_sample() const { return kHelperBase + next_helper_sample_; }
  void skip_helper_samples(uint32_t count) { next_helper_sample_ += count; }

  // Takes the device sums away (to reuse them for the tile's next accumulation).
  std::unique_ptr<PtDeviceSums> detach() { return std::move(device_); }
  PtDeviceSums* device_sums() { return device_.get(); }

  // Algorithm 1: adds a batch (own samples to their pixels, reprojected ones to the other eye's).
  void merge(const PtBatch& batch);
  // Counts a batch the device added to device_sums() itself.
  void count_merged(const PtBatchTotals& totals);

  // Both eyes as sRGB RGBA8 words, as tiles travel (and linear radiance when asked for).
  PtResolved resolve(const ResolveOptions& options, bool want_linear = false) const;
  // Mean linear radiance per pixel of `eye` (tile rows), median-filtered where §3.4 says so.
  std::vector<float> resolve_linear(uint32_t eye, const ResolveOptions& options) const;
  // The same as sRGB RGBA8 words (red in the low byte).
  std::vector<uint32_t> resolve_rgba8(uint32_t eye, const ResolveOptions& options) const;
  // Pixels the median filter replaces in `eye` under `options`.
  size_t median_pixels(uint32_t eye, const ResolveOptions& options) const;

  // One pixel's sums (read back from the device when they live there: tests).
  PtPixelAccum pixel(uint32_t eye, size_t index) const;

  // Totals since the last reset.
  uint64_t own_samples() const { return own_samples_; }            // pixel samples traced (both eyes)
  uint64_t reprojected_samples() const { return reprojected_; }    // extra samples received from the other eye
  uint64_t segments() const { return segments_; }                  // closest-hit rays
  uint64_t stopped_samples() const { return stopped_; }
  uint32_t batches() const { return batches_; }

 private:
  std::vector<float> host_resolve_linear(uint32_t eye, const ResolveOptions& options) const;

  AccumulationKey key_;
  TileRect rect_;
  std::vector<PtPixelAccum> pixels_;      // host sums, empty while on a device
  std::unique_ptr<PtDeviceSums> device_;
  uint32_t next_sample_ = 0, next_helper_sample_ = 0;
  uint64_t own_samples_ = 0, reprojected_ = 0, segments_ = 0, stopped_ = 0;
  uint32_t batches_ = 0;
};

// The tiles a worker owns, keyed by tile id. A request whose key differs from the stored one
// starts that tile afresh (pose or gaze moved, settings changed); device sums of the same size
// are zeroed and kept for it rather than allocated again.
//
// What the tiles hold is bounded: a tile that would take the cache past its budget first drops the
// tiles used longest ago (they start afresh if asked for again), except those of the render call
// in progress (begin_call), which one call may need at once. Masters choose image and tile sizes,
// so without a bound, frames of ever new tiles would hold a worker's memory until it ran out.
class AccumulationCache {
 public:
  // 40 bytes a pixel and eye: 1 GiB holds 13 stereo 1280x800 frames of sums.
  static constexpr uint64_t kDefaultMaxBytes = uint64_t(1) << 30;
  explicit AccumulationCache(uint64_t max_bytes = kDefaultMaxBytes) : max_bytes_(max_bytes) {}

  // Device sums for a tile of `pixels` pixels (both eyes), or nullptr for host sums.
  using SumsFactory = std::function<std::unique_ptr<PtDeviceSums>(size_t pixels)>;
  // A render call starts: the tiles it gets stay until the next call, whatever the budget.
  void begin_call() { ++call_; }
  // The tile's accumulation for `key` and `rect`; *reset tells whether it was (re)started.
  TileAccumulation& get(uint32_t tile_id, const AccumulationKey& key, const TileRect& rect, bool* reset = nullptr,
                        const SumsFactory& make_sums = {});
  TileAccumulation* find(uint32_t tile_id);
  void erase(uint32_t tile_id);
  void clear();
  size_t size() const { return tiles_.size(); }
  uint64_t bytes() const { return bytes_; }

 private:
  struct Entry {
    std::unique_ptr<TileAccumulation> tile;
    uint64_t bytes = 0;
    uint64_t last_call = 0;
  };
  // Drops the tiles used longest ago, none of this call's, until `wanted` more bytes fit.
  void make_room(uint64_t wanted, uint32_t keep);

  std::map<uint32_t, Entry> tiles_;
  uint64_t max_bytes_, bytes_ = 0, call_ = 0;
};

}  // namespace tessera
