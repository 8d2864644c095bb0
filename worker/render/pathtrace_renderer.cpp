#include "worker/render/pathtrace_renderer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <deque>
#include <mutex>
#include <thread>

#include "common/base/error.h"
#include "common/base/usage_error.h"
#include "common/render/stereo.h"
#include "common/scene/scene_motion.h"
#include "kernels/device/cpu/pathtrace_cpu.h"

namespace tessera {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

// Algorithm 2 on the CPU cores besides the merging one: each helper traces whole-tile samples
// into a batch of its own and hands finished batches over; only the merging thread touches the
// accumulation (so helpers never wait for each other).
class CpuHelpers {
 public:
  CpuHelpers(unsigned threads, const SceneView& view, const ShadingContext& shading, const PtLaunch& base,
             TileAccumulation& acc)
      : view_(view), shading_(shading), base_(base), acc_(acc), first_(acc.next_helper_sample()), next_(first_) {
    for (unsigned i = 0; i < threads; ++i) pool_.emplace_back([this] { run(); });
  }
  ~CpuHelpers() { stop(); }

  // Batches finished since the last call.
  std::deque<PtBatch> take() {
    std::lock_guard lock(mutex_);
    std::deque<PtBatch> out;
    out.swap(done_);
    return out;
  }
  // Asks the helpers to stop after their current row and waits for them.
  void stop() {
    stop_ = true;
    for (auto& t : pool_)
      if (t.joinable()) t.join();
    pool_.clear();
    acc_.skip_helper_samples(next_ - first_);  // every index handed out, finished or not
    first_ = next_;
  }

 private:
  void run() {
    PtLaunch l = base_;
    l.pt.samples = 1;
    while (!stop_) {
      l.pt.first_sample = next_.fetch_add(1);
      PtBatch batch;
      batch.resize(size_t(l.pt.tile_w) * l.pt.tile_h, l.pt.eye_count);
      const uint32_t rows =
          cpu::pathtrace_tile(view_, shading_, l.settings, l.pt, l.left, l.right, batch.own, batch.reproj, 1, &stop_);
      if (rows == 0) break;
      std::lock_guard lock(mutex_);
      done_.push_back(std::move(batch));
    }
  }

  const SceneView& view_;
  const ShadingContext& shading_;
  PtLaunch base_;
  TileAccumulation& acc_;
  uint32_t first_;
  std::atomic<uint32_t> next_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::deque<PtBatch> done_;
  std::vector<std::thread> pool_;
};

}  // namespace

PtVariant parse_pt_variant(const std::string& text) {
  if (text == "plain") return PtVariant::plain;
  if (text == "proposed") return PtVariant::proposed;
  throw UsageError("unknown --pt-variant '" + text + "' (expected plain or proposed)");
}

const char* to_string(PtVariant variant) { return variant == PtVariant::plain ? "plain" : "proposed"; }

namespace {
constexpr float kSkyColour[3] = {0.85f, 1.0f, 1.25f};  // bluish, luminance about 1
}  // namespace

RenderSettings default_pathtrace_settings(const PackedScene& scene) {
  RenderSettings s = default_render_settings(scene);
  s.max_depth = 8;
  s.light_samples = 1;
  s.ambient = 0.0f;
  // A scene the packer lit with a default sun gets its sky as the environment; others a black one.
  const float sky = scene.manifest().sky_ambient();
  s.background_r = sky * kSkyColour[0];
  s.background_g = sky * kSkyColour[1];
  s.background_b = sky * kSkyColour[2];
  return s;
}

PtView make_pt_view(const CameraSpec& head, bool stereo, float ipd, uint32_t width, uint32_t height, float gaze_u,
                    float gaze_v) {
  PtView view;
  view.gaze_u = gaze_u;
  view.gaze_v = gaze_v;
  if (stereo) {
    const StereoCameras cams = make_stereo_cameras(head, ipd, width, height);
    view.eyes = {cams.left, cams.right};
    view.eye_count = 2;
  } else {
    view.eyes[0] = make_camera(head, width, height);
    view.eye_count = 1;
  }
  return view;
}

uint32_t PathTraceSettings::features() const {
  if (variant == PtVariant::plain) return 0;
  uint32_t f = 0;
  if (reproject) f |= TS_PT_REPROJECT;
  if (reproject && reproject_mirror) f |= TS_PT_REPROJECT_MIRROR;
  if (reproject && visibility_ray) f |= TS_PT_VISIBILITY_RAY;
  if (gaze_stop) f |= TS_PT_GAZE_STOP;
  if (gaze_stop && stop_compensate) f |= TS_PT_STOP_COMPENSATE;
  return f;
}

PathTraceRenderer::PathTraceRenderer(const PackedScene& scene, const PathTraceRendererOptions& options)
    : scene_(scene),
      options_(options),
      backend_(make_pathtrace_backend(scene, options.device)),
      host_view_(scene.host_view(options.device.scene_memory)),
      host_shading_(ShadingData::build(scene)),
      host_context_(host_shading_.host_context()),
      scene_lights_(host_shading_.lights) {
  if (scene.instanced()) {  // as the backend: placed as packed (time 0) until told otherwise
    host_instances_.emplace(scene, host_shading_);
    host_instances_->place(SceneMotion::of_scene(scene, "scene")->top_level(), host_view_, host_shading_);
    host_context_ = host_shading_.host_context();
  }
}

void PathTraceRenderer::place_instances(const TopLevelBvh& top) {
  if (!host_instances_) return;
  backend_->place_instances(top);
  host_instances_->place(top, host_view_, host_shading_);
  host_context_ = host_shading_.host_context();
  cache_.clear();
}

void PathTraceRenderer::set_sun(const std::optional<SunOverride>& sun) {
  if (sun == sun_) return;
  sun_ = sun;
  host_shading_.lights = lights_with_sun(scene_lights_, sun);
  host_context_ = host_shading_.host_context();
  backend_->set_lights(host_shading_.lights);
  cache_.clear();
}

PathTraceRenderer::~PathTraceRenderer() = default;

std::string PathTraceRenderer::description() const {
  std::string d = backend_->description();
  if (options_.cpu_threads > 0) d += " + " + std::to_string(options_.cpu_threads) + " CPU helper threads";
  return d;
}

ResolveOptions PathTraceRenderer::resolve_options(const PathTraceSettings& pt, float exposure) {
  ResolveOptions r;
  r.exposure = exposure;
  r.median = pt.median_enabled() && pt.gaze_stop;
  r.median_max_samples = pt.median_max_samples;
  return r;
}

PathTraceParams PathTraceRenderer::kernel_params(const PtView& view, const PathTraceSettings& pt, const TileRect& tile) {
  if (view.eye_count < 1 || view.eye_count > 2) throw Error("pathtrace: eye_count must be 1 or 2");
  if (!(view.gaze_u >= 0.0f && view.gaze_u <= 1.0f && view.gaze_v >= 0.0f && view.gaze_v <= 1.0f))
    throw Error("pathtrace: the gaze point must lie in [0, 1] x [0, 1]");
  if (!(pt.p_max >= 0.0f && pt.p_max < 1.0f)) throw Error("pathtrace: P_max must lie in [0, 1)");
  const CameraParams& cam = view.eyes[0];
  if (tile.width == 0 || tile.height == 0 || tile.x0 + tile.width > cam.width || tile.y0 + tile.height > cam.height)
    throw Error("pathtrace: the tile does not lie inside the image");
  PathTraceParams p{};
  p.features = pt.features();
  p.eye_count = view.eye_count;
  p.depth_threshold = pt.depth_threshold;
  p.rr_depth = pt.rr_depth;
  p.tile_x0 = tile.x0;
  p.tile_y0 = tile.y0;
  p.tile_w = tile.width;
  p.tile_h = tile.height;
  p.p_max = pt.p_max;
  p.gaze_x = view.gaze_u * float(cam.width);
  p.gaze_y = view.gaze_v * float(cam.height);
  float d_max = 0.0f;  // the farthest image corner from the gaze point
  for (float cx : {0.0f, float(cam.width)})
    for (float cy : {0.0f, float(cam.height)}) d_max = std::max(d_max, std::hypot(cx - p.gaze_x, cy - p.gaze_y));
  p.inv_d_max = d_max > 0.0f ? 1.0f / d_max : 0.0f;
  if (!(pt.indirect_clamp >= 0.0f && std::isfinite(pt.indirect_clamp))) throw Error("pathtrace: the clamp must be >= 0");
  p.indirect_clamp = pt.indirect_clamp;
  return p;
}

uint32_t PathTraceRenderer::samples_per_launch(const PathTraceSettings& pt, const TileRect& tile, uint32_t eye_count) const {
  const uint32_t wanted = pt.launch_samples ? pt.launch_samples : backend_->is_opencl() ? (pt.spp + 1) / 2 : 1u;
  // Bounded launches: a request for many samples never ties the device up in one long launch.
  const uint64_t launch_pixels = uint64_t(tile.width) * tile.height * eye_count;
  const uint32_t bounded = uint32_t(std::max<uint64_t>(1, kMaxLaunchPixelSamples / std::max<uint64_t>(1, launch_pixels)));
  return std::max(1u, std::min({wanted, pt.spp, bounded}));
}

PtTileResult PathTraceRenderer::render_tile(const PtView& view, const RenderSettings& settings, const PathTraceSettings& pt,
                                            uint32_t tile_id, const TileRect& tile, const StopRequested& stop) {
  const auto start = Clock::now();
  if (pt.spp == 0) throw Error("pathtrace: spp must be at least 1");
  PtLaunch base;
  base.pt = kernel_params(view, pt, tile);
  base.settings = settings;
  base.left = view.eyes[0];
  base.right = view.eye_count > 1 ? view.eyes[1] : view.eyes[0];
  if (view.eye_count > 1 && (base.right.width != base.left.width || base.right.height != base.left.height))
    throw Error("pathtrace: the eye images differ in size");

  PtTileResult result;
  PtTileStats& stats = result.stats;
  cache_.begin_call();
  AccumulationCache::SumsFactory device_sums;
  if (sums_on_device()) device_sums = [this](size_t pixels) { return backend_->make_sums(pixels); };
  TileAccumulation& acc = cache_.get(tile_id, make_key(view.eyes.data(), view.eye_count, base.pt, settings), tile,
                                     &stats.reset, device_sums);
  PtDeviceSums* const sums = acc.device_sums();
  const uint64_t reproj_before = acc.reprojected_samples();
  const uint64_t seg_before = acc.segments(), stopped_before = acc.stopped_samples();

  std::optional<CpuHelpers> helpers;
  if (options_.cpu_threads > 0) helpers.emplace(options_.cpu_threads, host_view_, host_context_, base, acc);
  // With device sums, helper batches add up here and go to the device once, after the launches
  // (an upload in between would wait for the launch in flight and leave the device idle).
  PtBatch helper_sum;
  auto merge_helpers = [&] {
    if (!helpers) return;
    for (const PtBatch& b : helpers->take()) {
      if (sums) {
        stats.helper_pixel_samples += helper_sum.add(b);
      } else {
        const uint64_t before = acc.own_samples();
        acc.merge(b);
        stats.helper_pixel_samples += acc.own_samples() - before;
      }
      ++stats.helper_batches;
    }
  };

  // Algorithm 4: keep the device busy with launch i + 1 while launch i is merged.
  const uint32_t per_launch = samples_per_launch(pt, tile, view.eye_count);
  const uint32_t launches = (pt.spp + per_launch - 1) / per_launch;
  PtBatch batches[PathTraceBackend::kSlots];
  auto submit = [&](uint32_t i) {
    PtLaunch l = base;
    l.pt.samples = std::min(per_launch, pt.spp - i * per_launch);
    l.pt.first_sample = acc.take_samples(l.pt.samples);
    backend_->submit(int(i % PathTraceBackend::kSlots), l, batches[i % PathTraceBackend::kSlots], sums);
  };
  const uint32_t in_flight = backend_->is_opencl() ? PathTraceBackend::kSlots : 1;
  for (uint32_t i = 0; i < std::min(launches, in_flight); ++i) submit(i);
  for (uint32_t i = 0; i < launches; ++i) {
    const int slot = int(i % PathTraceBackend::kSlots);
    if (stop && stop()) {  // wait for the launches in flight, then forget the tile's half-merged samples
      for (uint32_t j = i; j < std::min(launches, i + in_flight); ++j) backend_->collect(int(j % PathTraceBackend::kSlots));
      if (helpers) helpers->stop();
      helpers.reset();
      cache_.erase(tile_id);
      throw RenderCanceled();
    }
    const PtCollected c = backend_->collect(slot);
    stats.device_ms += c.kernel_ms;
    const auto merge_start = Clock::now();
    if (sums) {
      acc.count_merged(c.totals);
      stats.device_pixel_samples += c.totals.own_samples;
      stats.merge_ms += c.merge_ms;
    } else {
      const uint64_t before = acc.own_samples();
      acc.merge(batches[slot]);
      stats.device_pixel_samples += acc.own_samples() - before;
    }
    merge_helpers();  // Algorithm 1 lines 4-8: whatever the helpers finished meanwhile
    stats.merge_ms += ms_since(merge_start);
    if (i + in_flight < launches) submit(i + in_flight);
  }
  if (helpers) {
    helpers->stop();  // they stop after their current row
    const auto merge_start = Clock::now();
    merge_helpers();
    if (!helper_sum.empty()) acc.merge(helper_sum);
    stats.merge_ms += ms_since(merge_start);
    helpers.reset();
  }

  const auto resolve_start = Clock::now();
  PtResolved resolved = acc.resolve(resolve_options(pt, settings.exposure));
  for (uint32_t e = 0; e < view.eye_count; ++e) result.eyes[e] = std::move(resolved.eyes[e]);
  stats.median_pixels = resolved.median_pixels;
  stats.resolve_ms = ms_since(resolve_start);
  stats.reprojected = acc.reprojected_samples() - reproj_before;
  stats.segments = acc.segments() - seg_before;
  stats.stopped = acc.stopped_samples() - stopped_before;
  stats.accumulated_spp = double(acc.own_samples()) / double(acc.pixels_per_eye() * acc.eye_count());
  stats.ms = ms_since(start);
  return result;
}

std::vector<PtTileStats> PathTraceRenderer::render_tiles(const PtView& view, const RenderSettings& settings,
                                                         const PathTraceSettings& pt, std::span<const PtBatchTile> tiles,
                                                         std::span<uint32_t> out, const StopRequested& stop,
                                                         const TileDone& on_tile_done) {
  std::vector<PtTileStats> stats(tiles.size());
  const size_t eyes = view.eye_count;
  for (const PtBatchTile& t : tiles)
    if (t.offset > out.size() || eyes * t.rect.width * t.rect.height > out.size() - t.offset)
      throw Error("pathtrace: a tile's pixels lie outside the batch's output");
  if (!launches_batches()) {
    for (size_t i = 0; i < tiles.size(); ++i) {
      PtTileResult r = render_tile(view, settings, pt, tiles[i].tile_id, tiles[i].rect, stop);
      for (uint32_t e = 0; e < view.eye_count; ++e)
        std::copy(r.eyes[e].begin(), r.eyes[e].end(), out.begin() + ptrdiff_t(tiles[i].offset + e * r.eyes[e].size()));
      stats[i] = r.stats;
      if (on_tile_done) on_tile_done(i, out.subspan(tiles[i].offset, eyes * tiles[i].rect.width * tiles[i].rect.height), stats[i]);
    }
    return stats;
  }
  if (pt.spp == 0) throw Error("pathtrace: spp must be at least 1");
  // Batches of pairs that render_tile would give the same samples a launch (so that each pair adds
  // its samples in the same order), each launch bounded as render_tile's, each tile once.
  std::vector<uint32_t> per_launch(tiles.size());
  std::vector<size_t> order(tiles.size());
  for (size_t i = 0; i < tiles.size(); ++i) {
    per_launch[i] = samples_per_launch(pt, tiles[i].rect, view.eye_count);
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return per_launch[a] < per_launch[b]; });
  std::vector<size_t> batch;
  uint64_t batch_pixel_samples = 0;
  const auto render_and_clear = [&] {
    if (!batch.empty()) render_batch(view, settings, pt, tiles, batch, per_launch[batch[0]], out, stop, on_tile_done, stats);
    batch.clear();
    batch_pixel_samples = 0;
  };
  for (size_t i : order) {
    const uint64_t pixel_samples = uint64_t(tiles[i].rect.width) * tiles[i].rect.height * eyes * per_launch[i];
    const bool joins = !batch.empty() && per_launch[i] == per_launch[batch[0]] &&
                       batch_pixel_samples + pixel_samples <= kMaxLaunchPixelSamples &&
                       std::none_of(batch.begin(), batch.end(), [&](size_t j) { return tiles[j].tile_id == tiles[i].tile_id; });
    if (!joins) render_and_clear();
    batch.push_back(i);
    batch_pixel_samples += pixel_samples;
  }
  render_and_clear();
  return stats;
}

void PathTraceRenderer::render_batch(const PtView& view, const RenderSettings& settings, const PathTraceSettings& pt,
                                     std::span<const PtBatchTile> tiles, std::span<const size_t> batch, uint32_t per_launch,
                                     std::span<uint32_t> out, const StopRequested& stop, const TileDone& on_tile_done,
                                     std::vector<PtTileStats>& stats) {
  const auto start = Clock::now();
  PtLaunch base;
  base.settings = settings;
  base.left = view.eyes[0];
  base.right = view.eye_count > 1 ? view.eyes[1] : view.eyes[0];
  if (view.eye_count > 1 && (base.right.width != base.left.width || base.right.height != base.left.height))
    throw Error("pathtrace: the eye images differ in size");
  const AccumulationCache::SumsFactory device_sums = [this](size_t pixels) { return backend_->make_sums(pixels); };
  std::vector<PtBatchTileWork> work;
  struct Before {
    uint64_t reprojected, segments, stopped;
  };
  std::vector<Before> before;
  uint64_t batch_pixels = 0;
  cache_.begin_call();
  for (size_t i : batch) base.pt = kernel_params(view, pt, tiles[i].rect);  // checks every tile before any takes samples
  for (size_t i : batch) {  // (the tile fields of base.pt are the batch kernels' business)
    const PtBatchTile& t = tiles[i];
    TileAccumulation& acc =
        cache_.get(t.tile_id, make_key(view.eyes.data(), view.eye_count, base.pt, settings), t.rect, &stats[i].reset, device_sums);
    before.push_back({acc.reprojected_samples(), acc.segments(), acc.stopped_samples()});
    work.push_back({t.rect, acc.device_sums(), acc.take_samples(pt.spp), t.offset});
    batch_pixels += uint64_t(t.rect.width) * t.rect.height;
  }
  // Each pair's counts and stats once it is on the host.
  const PtBatchPairDone pair_done = [&](const PtBatchPair& pair) {
    const size_t k = pair.index;
    const PtBatchTile& t = tiles[batch[k]];
    PtTileStats& s = stats[batch[k]];
    TileAccumulation& acc = *cache_.find(t.tile_id);
    for (const PtBatchTotals& totals : pair.merged) {
      acc.count_merged(totals);
      s.device_pixel_samples += totals.own_samples;
    }
    s.reprojected = acc.reprojected_samples() - before[k].reprojected;
    s.segments = acc.segments() - before[k].segments;
    s.stopped = acc.stopped_samples() - before[k].stopped;
    s.median_pixels = pair.median_pixels;
    s.accumulated_spp = double(acc.own_samples()) / double(acc.pixels_per_eye() * acc.eye_count());
    s.ms = ms_since(start) * double(uint64_t(t.rect.width) * t.rect.height) / double(batch_pixels);
    s.device_ms = pair.kernel_ms;
    s.merge_ms = pair.merge_ms;
    s.resolve_ms = pair.resolve_ms;
    if (on_tile_done) on_tile_done(batch[k], pair.pixels, s);
  };
  try {
    backend_->render_batch(base, work, pt.spp, per_launch, resolve_options(pt, settings.exposure), out, stop, pair_done);
  } catch (...) {  // the pairs hold samples half merged, or none of those they took
    for (size_t i : batch) cache_.erase(tiles[i].tile_id);
    throw;
  }
}

}  // namespace tessera
