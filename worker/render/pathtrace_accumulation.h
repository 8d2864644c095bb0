#pragma once
// Progressive accumulation of a stereo tile pair in the `pathtrace` mode. The worker that owns a
// tile keeps its samples while the view (both eyes' cameras, the gaze point) and the settings that
// shape the estimate stay the same; any change resets it (AccumulationKey). Batches of samples
// from the GPU and from CPU helper threads are merged into it on one thread (Algorithm 1 of Kim &
// Sung 2021), and it resolves into pixels with the noise removal of §3.4 (Algorithm 5 lines 9-14).
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "common/image/image.h"
#include "kernels/device/cpu/raytrace_cpu.h"
#include "kernels/integrators/pathtrace_params.h"
#include "kernels/shading/shading_context.h"

namespace tessera {

using TileRect = cpu::TileRect;

// Everything that decides what a sample estimates. Compared bytewise; built by make_key.
struct AccumulationKey {
  CameraParams eyes[2]{};
  uint32_t eye_count = 0;
  float gaze_x = 0, gaze_y = 0;  // pixels
  uint32_t features = 0, depth_threshold = 0, rr_depth = 0;
  float p_max = 0;
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
};

struct PtPixelAccum {
  float own_r = 0, own_g = 0, own_b = 0;
  float rep_r = 0, rep_g = 0, rep_b = 0;
  uint32_t own_n = 0, stopped = 0, specular = 0;
  float rep_n = 0;
};

struct ResolveOptions {
  float exposure = 1.0f;
  bool median = false;              // §3.4 noise removal
  uint32_t median_max_samples = 1;  // only while a pixel holds at most this many own samples
};

class TileAccumulation {
 public:
  TileAccumulation(const AccumulationKey& key, const TileRect& rect);

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

  // Algorithm 1: adds a batch (own samples to their pixels, reprojected ones to the other eye's).
  void merge(const PtBatch& batch);

  // Mean linear radiance per pixel of `eye` (tile rows), median-filtered where §3.4 says so.
  std::vector<float> resolve_linear(uint32_t eye, const ResolveOptions& options) const;
  // The same as sRGB RGBA8 words (red in the low byte), as tiles travel.
  std::vector<uint32_t> resolve_rgba8(uint32_t eye, const ResolveOptions& options) const;
  // Pixels the median filter replaces in `eye` under `options`.
  size_t median_pixels(uint32_t eye, const ResolveOptions& options) const;

  const PtPixelAccum& pixel(uint32_t eye, size_t index) const { return pixels_[eye * pixels_per_eye() + index]; }

  // Totals since the last reset.
  uint64_t own_samples() const { return own_samples_; }            // pixel samples traced (both eyes)
  uint64_t reprojected_samples() const { return reprojected_; }    // extra samples received from the other eye
  uint64_t segments() const { return segments_; }                  // closest-hit rays
  uint64_t stopped_samples() const { return stopped_; }
  uint32_t batches() const { return batches_; }

 private:
  AccumulationKey key_;
  TileRect rect_;
  std::vector<PtPixelAccum> pixels_;
  uint32_t next_sample_ = 0, next_helper_sample_ = 0;
  uint64_t own_samples_ = 0, reprojected_ = 0, segments_ = 0, stopped_ = 0;
  uint32_t batches_ = 0;
};

// The tiles a worker owns, keyed by tile id. A request whose key differs from the stored one
// starts that tile afresh (pose or gaze moved, settings changed).
class AccumulationCache {
 public:
  // The tile's accumulation for `key` and `rect`; *reset tells whether it was (re)started.
  TileAccumulation& get(uint32_t tile_id, const AccumulationKey& key, const TileRect& rect, bool* reset = nullptr);
  TileAccumulation* find(uint32_t tile_id);
  void erase(uint32_t tile_id) { tiles_.erase(tile_id); }
  void clear() { tiles_.clear(); }
  size_t size() const { return tiles_.size(); }

 private:
  std::map<uint32_t, std::unique_ptr<TileAccumulation>> tiles_;
};

}  // namespace tessera
