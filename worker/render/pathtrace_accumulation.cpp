#include "worker/render/pathtrace_accumulation.h"

#include <atomic>
#include <cstring>

#include "common/base/error.h"
#include "common/base/parallel_for.h"
#include "kernels/integrators/pathtrace_resolve.h"

namespace tessera {

bool AccumulationKey::operator==(const AccumulationKey& o) const {
  return std::memcmp(eyes, o.eyes, sizeof eyes) == 0 && eye_count == o.eye_count && gaze_x == o.gaze_x &&
         gaze_y == o.gaze_y && features == o.features && depth_threshold == o.depth_threshold && rr_depth == o.rr_depth &&
         p_max == o.p_max && std::memcmp(&settings, &o.settings, sizeof settings) == 0;
}

AccumulationKey make_key(const CameraParams* eyes, uint32_t eye_count, const PathTraceParams& pt,
                         const RenderSettings& settings) {
  AccumulationKey k;
  for (uint32_t e = 0; e < eye_count && e < 2; ++e) k.eyes[e] = eyes[e];
  k.eye_count = eye_count;
  k.gaze_x = pt.gaze_x;
  k.gaze_y = pt.gaze_y;
  k.features = pt.features;
  k.depth_threshold = pt.depth_threshold;
  k.rr_depth = pt.rr_depth;
  k.p_max = pt.p_max;
  k.settings = settings;
  k.settings.exposure = 0.0f;
  return k;
}

void PtBatch::resize(size_t pixels_per_eye, uint32_t eye_count) {
  own.resize(pixels_per_eye * eye_count);
  reproj.assign(4 * pixels_per_eye * eye_count, 0.0f);
}

TileAccumulation::TileAccumulation(const AccumulationKey& key, const TileRect& rect)
    : key_(key), rect_(rect), pixels_(size_t(rect.width) * rect.height * key.eye_count) {
  if (key.eye_count < 1 || key.eye_count > 2) throw Error("pathtrace: eye_count must be 1 or 2");
}

uint32_t TileAccumulation::take_samples(uint32_t count) {
  const uint32_t first = next_sample_;
  if (uint64_t(first) + count >= kHelperBase) throw Error("pathtrace: too many samples accumulated in one tile");
  next_sample_ += count;
  return first;
}


void TileAccumulation::merge(const PtBatch& batch) {
  const size_t n = pixels_.size();
  if (batch.own.size() != n || batch.reproj.size() != 4 * n) throw Error("pathtrace: batch does not match the tile");
  // Counters summed per chunk, pixels merged in parallel (a frame-sized batch is ~0.6 M pixels).
  std::atomic<uint64_t> own_total{0}, reprojected_total{0}, segments_total{0}, stopped_total{0};
  parallel_for_chunks(n, 32768, [&](size_t begin, size_t end) {
    uint64_t own_samples = 0, reprojected = 0, segments = 0, stopped = 0;
    for (size_t i = begin; i < end; ++i) {
      const PtPixelOut& o = batch.own[i];
      PtPixelAccum& p = pixels_[i];
      p.own_r += o.r;
      p.own_g += o.g;
      p.own_b += o.b;
      p.own_n += o.samples;
      p.stopped += o.stopped;
      p.specular += o.specular;
      const float* r = &batch.reproj[4 * i];
      p.rep_r += r[0];
      p.rep_g += r[1];
      p.rep_b += r[2];
      p.rep_n += r[3];
      own_samples += o.samples;
      reprojected += uint64_t(r[3] + 0.5f);
      segments += o.segments;
      stopped += o.stopped;
    }
    own_total += own_samples;
    reprojected_total += reprojected;
    segments_total += segments;
    stopped_total += stopped;
  });
  own_samples_ += own_total;
  reprojected_ += reprojected_total;
  segments_ += segments_total;
  stopped_ += stopped_total;
  ++batches_;
}

std::vector<float> TileAccumulation::resolve_linear(uint32_t eye, const ResolveOptions& options) const {
  if (eye >= eye_count()) throw Error("pathtrace: no such eye in this tile");
  const size_t n = pixels_per_eye();
  const PtPixelAccum* px = &pixels_[eye * n];
  std::vector<float> mean(3 * n);
  // A whole stereo frame is ~0.6 M pixels: spread over the cores (the device is idle meanwhile).
  parallel_for_chunks(n, 16384, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const PtPixelAccum& p = px[i];
      const float3 m = pt_pixel_mean(make_float3(p.own_r, p.own_g, p.own_b), float(p.own_n),
                                     make_float3(p.rep_r, p.rep_g, p.rep_b), p.rep_n);
      mean[3 * i] = m.x;
      mean[3 * i + 1] = m.y;
      mean[3 * i + 2] = m.z;
    }
  });
  if (!options.median) return mean;
  std::vector<float> out = mean;
  parallel_for_chunks(rect_.height, 16, [&](size_t y0, size_t y1) {
    for (size_t y = y0; y < y1; ++y)
      for (uint32_t x = 0; x < rect_.width; ++x) {
        const size_t i = y * rect_.width + x;
        const PtPixelAccum& p = px[i];
        if (!pt_median_wanted(p.own_n, p.stopped, p.specular, options.median_max_samples)) continue;
        const float3 m = pt_median8(mean.data(), rect_.width, rect_.height, x, uint32_t(y));
        out[3 * i] = m.x;
        out[3 * i + 1] = m.y;
        out[3 * i + 2] = m.z;
      }
  });
  return out;
}

std::vector<uint32_t> TileAccumulation::resolve_rgba8(uint32_t eye, const ResolveOptions& options) const {
  const std::vector<float> rgb = resolve_linear(eye, options);
  std::vector<uint32_t> words(pixels_per_eye());
  parallel_for_chunks(words.size(), 16384, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const uint32_t r = linear_to_srgb8(rgb[3 * i] * options.exposure);
      const uint32_t g = linear_to_srgb8(rgb[3 * i + 1] * options.exposure);
      const uint32_t b = linear_to_srgb8(rgb[3 * i + 2] * options.exposure);
      words[i] = r | g << 8 | b << 16 | 0xFF000000u;
    }
  });
  return words;
}

size_t TileAccumulation::median_pixels(uint32_t eye, const ResolveOptions& options) const {
  if (!options.median) return 0;
  size_t count = 0;
  const size_t n = pixels_per_eye();
  for (size_t i = 0; i < n; ++i) {
    const PtPixelAccum& p = pixels_[eye * n + i];
    count += pt_median_wanted(p.own_n, p.stopped, p.specular, options.median_max_samples) ? 1 : 0;
  }
  return count;
}

TileAccumulation& AccumulationCache::get(uint32_t tile_id, const AccumulationKey& key, const TileRect& rect, bool* reset) {
  auto& slot = tiles_[tile_id];
  const bool fresh = !slot || !(slot->key() == key) || slot->rect().x0 != rect.x0 || slot->rect().y0 != rect.y0 ||
                     slot->rect().width != rect.width || slot->rect().height != rect.height;
  if (fresh) slot = std::make_unique<TileAccumulation>(key, rect);
  if (reset) *reset = fresh;
  return *slot;
}

TileAccumulation* AccumulationCache::find(uint32_t tile_id) {
  const auto it = tiles_.find(tile_id);
  return it == tiles_.end() ? nullptr : it->second.get();
}

}  // namespace tessera
