#include "worker/render/pathtrace_accumulation.h"

#include <atomic>
#include <cstring>

#include "common/base/error.h"
#include "common/base/parallel_for.h"
#include "common/image/srgb_thresholds.h"

namespace tessera {

bool AccumulationKey::operator==(const AccumulationKey& o) const {
  return std::memcmp(eyes, o.eyes, sizeof eyes) == 0 && eye_count == o.eye_count && gaze_x == o.gaze_x &&
         gaze_y == o.gaze_y && features == o.features && depth_threshold == o.depth_threshold && rr_depth == o.rr_depth &&
         p_max == o.p_max && indirect_clamp == o.indirect_clamp && std::memcmp(&settings, &o.settings, sizeof settings) == 0;
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
  k.indirect_clamp = pt.indirect_clamp;
  k.settings = settings;
  k.settings.exposure = 0.0f;
  return k;
}

void PtBatch::resize(size_t pixels_per_eye, uint32_t eye_count) {
  own.resize(pixels_per_eye * eye_count);
  reproj.assign(4 * pixels_per_eye * eye_count, 0.0f);
}

uint64_t PtBatch::add(const PtBatch& other) {
  if (empty()) {
    *this = other;
  } else {
    if (other.own.size() != own.size() || other.reproj.size() != reproj.size())
      throw Error("pathtrace: batches of different tiles");
    for (size_t i = 0; i < own.size(); ++i) {
      PtPixelOut& o = own[i];
      const PtPixelOut& a = other.own[i];
      o.r += a.r, o.g += a.g, o.b += a.b;
      o.samples += a.samples, o.stopped += a.stopped, o.specular += a.specular;
      o.reprojected += a.reprojected, o.segments += a.segments;
    }
    for (size_t i = 0; i < reproj.size(); ++i) reproj[i] += other.reproj[i];
  }
  uint64_t samples = 0;
  for (const PtPixelOut& o : other.own) samples += o.samples;
  return samples;
}

PtBatchTotals& PtBatchTotals::operator+=(const PtBatchTotals& o) {
  own_samples += o.own_samples;
  reprojected += o.reprojected;
  segments += o.segments;
  stopped += o.stopped;
  return *this;
}

PtResolveParams resolve_params(const ResolveOptions& options, const TileRect& rect, uint32_t eye_count) {
  PtResolveParams p{};
  p.width = rect.width;
  p.height = rect.height;
  p.eye_count = eye_count;
  p.median = options.median ? 1u : 0u;
  p.median_max_samples = options.median_max_samples;
  p.exposure = options.exposure;
  return p;
}

TileAccumulation::TileAccumulation(const AccumulationKey& key, const TileRect& rect, std::unique_ptr<PtDeviceSums> sums)
    : key_(key), rect_(rect), device_(std::move(sums)) {
  if (key.eye_count < 1 || key.eye_count > 2) throw Error("pathtrace: eye_count must be 1 or 2");
  const size_t n = size_t(rect.width) * rect.height * key.eye_count;
  if (!device_) {
    pixels_.resize(n);
  } else {
    if (device_->pixels() != n) throw Error("pathtrace: device sums do not match the tile");
    device_->clear();
  }
}

uint32_t TileAccumulation::take_samples(uint32_t count) {
  const uint32_t first = next_sample_;
  if (uint64_t(first) + count >= kHelperBase) throw Error("pathtrace: too many samples accumulated in one tile");
  next_sample_ += count;
  return first;
}

void TileAccumulation::count_merged(const PtBatchTotals& totals) {
  own_samples_ += totals.own_samples;
  reprojected_ += totals.reprojected;
  segments_ += totals.segments;
  stopped_ += totals.stopped;
  ++batches_;
}

void TileAccumulation::merge(const PtBatch& batch) {
  const size_t n = pixels_per_eye() * eye_count();
  if (batch.own.size() != n || batch.reproj.size() != 4 * n) throw Error("pathtrace: batch does not match the tile");
  if (device_) {
    count_merged(device_->merge(batch));
    return;
  }
  // Counters summed per chunk, pixels merged in parallel (a frame-sized batch is ~0.6 M pixels).
  std::atomic<uint64_t> totals[TS_PT_TOTALS] = {};
  parallel_for_chunks(n, 32768, [&](size_t begin, size_t end) {
    uint64_t chunk[TS_PT_TOTALS] = {};
    for (size_t i = begin; i < end; ++i) {
      uint pixel[TS_PT_TOTALS];
      pt_accumulate(&pixels_[i], &batch.own[i], &batch.reproj[4 * i], pixel);
      for (uint32_t k = 0; k < TS_PT_TOTALS; ++k) chunk[k] += pixel[k];
    }
    for (uint32_t k = 0; k < TS_PT_TOTALS; ++k) totals[k] += chunk[k];
  });
  PtBatchTotals t;
  t.own_samples = totals[TS_PT_TOTAL_OWN];
  t.reprojected = totals[TS_PT_TOTAL_REPROJECTED];
  t.segments = totals[TS_PT_TOTAL_SEGMENTS];
  t.stopped = totals[TS_PT_TOTAL_STOPPED];
  count_merged(t);
}

std::vector<float> TileAccumulation::host_resolve_linear(uint32_t eye, const ResolveOptions& options) const {
  const size_t n = pixels_per_eye();
  const PtPixelAccum* px = &pixels_[eye * n];
  const PtResolveParams rp = resolve_params(options, rect_, eye_count());
  std::vector<float> mean(3 * n);
  // A whole stereo frame is ~0.6 M pixels: spread over the cores (the device is idle meanwhile).
  parallel_for_chunks(n, 16384, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const float3 m = pt_accum_mean(&px[i]);
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
        if (!pt_accum_median_wanted(&px[i], &rp)) continue;
        const float3 m = pt_resolve_pixel(&px[i], mean.data(), &rp, x, uint32_t(y));
        out[3 * i] = m.x;
        out[3 * i + 1] = m.y;
        out[3 * i + 2] = m.z;
      }
  });
  return out;
}

PtResolved TileAccumulation::resolve(const ResolveOptions& options, bool want_linear) const {
  if (device_) return device_->resolve(options, rect_, eye_count(), want_linear);
  PtResolved r;
  const ColorTables tables{linear_to_srgb8_thresholds().data(), linear_to_srgb8_thresholds().data()};
  for (uint32_t e = 0; e < eye_count(); ++e) {
    std::vector<float> rgb = host_resolve_linear(e, options);
    std::vector<uint32_t>& words = r.eyes[e];
    words.resize(pixels_per_eye());
    parallel_for_chunks(words.size(), 16384, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i)
        words[i] = pt_encode_rgba8(&tables, make_float3(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]), options.exposure);
    });
    r.median_pixels += median_pixels(e, options);
    if (want_linear) r.linear[e] = std::move(rgb);
  }
  return r;
}

std::vector<float> TileAccumulation::resolve_linear(uint32_t eye, const ResolveOptions& options) const {
  if (eye >= eye_count()) throw Error("pathtrace: no such eye in this tile");
  if (device_) return std::move(resolve(options, true).linear[eye]);
  return host_resolve_linear(eye, options);
}

std::vector<uint32_t> TileAccumulation::resolve_rgba8(uint32_t eye, const ResolveOptions& options) const {
  if (eye >= eye_count()) throw Error("pathtrace: no such eye in this tile");
  return std::move(resolve(options).eyes[eye]);
}

size_t TileAccumulation::median_pixels(uint32_t eye, const ResolveOptions& options) const {
  if (eye >= eye_count()) throw Error("pathtrace: no such eye in this tile");
  if (!options.median) return 0;
  const size_t n = pixels_per_eye();
  const PtResolveParams rp = resolve_params(options, rect_, eye_count());
  const std::vector<PtPixelAccum> device = device_ ? device_->read() : std::vector<PtPixelAccum>{};
  const PtPixelAccum* px = (device_ ? device.data() : pixels_.data()) + eye * n;
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) count += pt_accum_median_wanted(&px[i], &rp) ? 1 : 0;
  return count;
}

PtPixelAccum TileAccumulation::pixel(uint32_t eye, size_t index) const {
  const size_t i = eye * pixels_per_eye() + index;
  if (device_) return device_->read().at(i);
  return pixels_.at(i);
}

TileAccumulation& AccumulationCache::get(uint32_t tile_id, const AccumulationKey& key, const TileRect& rect, bool* reset,
                                         const SumsFactory& make_sums) {
  const auto found = tiles_.find(tile_id);
  TileAccumulation* held = found == tiles_.end() ? nullptr : found->second.tile.get();
  const bool fresh = !held || !(held->key() == key) || held->rect().x0 != rect.x0 || held->rect().y0 != rect.y0 ||
                     held->rect().width != rect.width || held->rect().height != rect.height;
  if (fresh) {
    const size_t pixels = size_t(rect.width) * rect.height * key.eye_count;
    const uint64_t bytes = uint64_t(pixels) * sizeof(PtPixelAccum);
    std::unique_ptr<PtDeviceSums> sums = held ? found->second.tile->detach() : nullptr;
    if (sums && sums->pixels() != pixels) sums.reset();
    const uint64_t held_bytes = held ? found->second.bytes : 0;
    if (bytes > held_bytes) make_room(bytes - held_bytes, tile_id);
    if (!sums && make_sums) sums = make_sums(pixels);
    Entry& entry = tiles_[tile_id];
    bytes_ = bytes_ - entry.bytes + bytes;
    entry.tile = std::make_unique<TileAccumulation>(key, rect, std::move(sums));
    entry.bytes = bytes;
  }
  Entry& entry = tiles_.at(tile_id);
  entry.last_call = call_;
  if (reset) *reset = fresh;
  return *entry.tile;
}

void AccumulationCache::make_room(uint64_t wanted, uint32_t keep) {
  while (bytes_ + wanted > max_bytes_) {
    auto oldest = tiles_.end();
    for (auto it = tiles_.begin(); it != tiles_.end(); ++it)
      if (it->first != keep && it->second.last_call < call_ && (oldest == tiles_.end() || it->second.last_call < oldest->second.last_call))
        oldest = it;
    if (oldest == tiles_.end()) return;  // all of this call's: it may exceed the budget by itself
    bytes_ -= oldest->second.bytes;
    tiles_.erase(oldest);
  }
}

TileAccumulation* AccumulationCache::find(uint32_t tile_id) {
  const auto it = tiles_.find(tile_id);
  return it == tiles_.end() ? nullptr : it->second.tile.get();
}

void AccumulationCache::erase(uint32_t tile_id) {
  const auto it = tiles_.find(tile_id);
  if (it == tiles_.end()) return;
  bytes_ -= it->second.bytes;
  tiles_.erase(it);
}

void AccumulationCache::clear() {
  tiles_.clear();
  bytes_ = 0;
}

}  // namespace tessera
