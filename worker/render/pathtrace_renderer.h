#pragma once
// The `pathtrace` render mode on one worker (Kim & Sung 2021): renders both eyes of a tile — the
// same rectangle in the left and the right eye image — into the tile's progressive accumulation,
// and returns the resolved pixels of both eyes.
//
//   PathTraceRenderer renderer(scene, {.device = "gpu", .cpu_threads = 3});
//   PtTileResult r = renderer.render_tile(view, settings, pt, tile_id, rect);   // r.eyes[0], r.eyes[1]
//
// Per call: the main device (GPU / PoCL / host backend) traces pt.spp samples per pixel and eye
// in launches of pt.launch_samples, double-buffered so the device never waits for the merging
// thread (Algorithm 4). With cpu_threads > 0, that many helper threads trace extra whole-tile
// samples on the host meanwhile (Algorithm 2) and hand them over; the calling thread alone merges
// device and helper batches into the accumulation (Algorithm 1). When the device is done, helpers
// stop at the next row and what they finished is merged too. On an OpenCL device the tile's sums
// stay in device memory (device_sums): each launch is merged there by a kernel, helper batches are
// summed on the host and uploaded once per call, and the tile is resolved there. The accumulation is keyed by
// (tile id, both cameras, gaze, estimate settings): while a pose and gaze hold, every call adds
// samples; any change starts the tile afresh. render_tiles does the same for many tiles at once,
// on a GPU in one launch per launch of samples (pathtrace_tile_batch.h).
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/render/camera_setup.h"
#include "common/render/shading_data.h"
#include "common/render/sun_override.h"
#include "worker/render/host_instances.h"
#include "worker/render/pathtrace_backend.h"

namespace tessera {

enum class PtVariant { plain, proposed };
// "plain" | "proposed"; Error otherwise.
PtVariant parse_pt_variant(const std::string& text);
const char* to_string(PtVariant variant);

// The mode's parameters, as tessera-render takes them (and, later, the master's FrameRequest).
struct PathTraceSettings {
  PtVariant variant = PtVariant::proposed;
  uint32_t spp = 1;              // samples per pixel and eye that one render_tile adds (main device)
  // Samples per pixel of one device launch; 0 = automatic: on an OpenCL device half of spp (two
  // launches in flight, one read-back each), on the host backend one.
  uint32_t launch_samples = 0;
  uint32_t depth_threshold = 1;  // T_d (Eq. 7 applies at vertices deeper than this; 0 = primary hit)
  float p_max = 0.9f;            // P_max of Eq. 7
  uint32_t rr_depth = 3;         // Russian roulette from this vertex depth on (both variants)
  // Proposed-variant parts, each on by default; turning one off measures what it brings.
  bool reproject = true;         // Algorithm 3: first-hit radiance to the other eye (Eq. 5)
  bool reproject_mirror = true;  // ... also through a mirror first hit (Eq. 6)
  bool visibility_ray = false;   // ... testing the other eye's view with a shadow ray, not its first hits
  bool gaze_stop = true;         // Eq. 7
  bool stop_compensate = false;  // divide surviving paths by 1 - P_d (unbiased; the paper does not)
  bool median = true;            // §3.4 noise removal
  uint32_t median_max_samples = 16;  // filter only pixels holding at most this many own samples
  // > 0: contributions after a path's first diffuse bounce are clamped to this radiance (largest
  // channel). Fewer fireflies at low sample counts, biased (energy is lost). 0: off (the paper).
  float indirect_clamp = 0.0f;

  // The kernel feature bits this variant uses (plain: none).
  uint32_t features() const;
  bool median_enabled() const { return variant == PtVariant::proposed && median; }
};

// The scene's defaults for path tracing: up to 8 path vertices, one emitter sample per vertex, no
// ambient term and a black environment (light comes from the scene's lights only), or a bluish sky
// of the manifest's sky_ambient where the packer gave a lightless scene its default sun.
RenderSettings default_pathtrace_settings(const PackedScene& scene);

// One frame's view of the tile: cameras of both eyes (eye_count 1: mono, eyes[0] only) and the
// gaze point in [0, 1] image coordinates (image centre when the pose source gives none).
struct PtView {
  std::array<CameraParams, 2> eyes{};
  uint32_t eye_count = 2;
  float gaze_u = 0.5f, gaze_v = 0.5f;
};

// The view of a frame request: the head pose and projection in `head`, eyes at -+ipd/2 along the
// head's right vector when stereo (make_stereo_cameras), the gaze point in [0, 1] image coordinates.
PtView make_pt_view(const CameraSpec& head, bool stereo, float ipd, uint32_t width, uint32_t height, float gaze_u = 0.5f,
                    float gaze_v = 0.5f);

struct PtTileStats {
  bool reset = false;                 // the accumulation was (re)started by this call
  uint64_t device_pixel_samples = 0;  // pixel samples the main device traced (both eyes)
  uint64_t helper_pixel_samples = 0;  // pixel samples CPU helpers traced
  uint64_t reprojected = 0;           // extra samples pixels received from the other eye
  uint64_t segments = 0;              // closest-hit rays
  uint64_t stopped = 0;               // samples the gaze rule stopped early
  uint32_t helper_batches = 0;        // helper batches merged (the last ones may be partial)
  size_t median_pixels = 0;           // pixels the noise removal replaced (both eyes)
  double ms = 0;                      // wall time of the call
  double device_ms = 0;               // kernel time on the main device (OpenCL profiling)
  double merge_ms = 0;                // merging: host time, or with device sums the merge kernels' device
                                      // time plus summing and uploading helper batches
  double resolve_ms = 0;              // wall time from resolving to having the RGBA8 pixels on the host
  double accumulated_spp = 0;         // own samples per pixel and eye in the tile after the call
};

struct PtTileResult {
  std::array<std::vector<uint32_t>, 2> eyes;  // RGBA8 words per eye (red in the low byte), tile rows
  PtTileStats stats;
};

// A tile pair of render_tiles: the tile's id and rectangle (the same in both eyes), and where its
// pixels go in the output: eye 0's tile rows from `offset` on, then eye 1's.
struct PtBatchTile {
  uint32_t tile_id = 0;
  TileRect rect;
  uint64_t offset = 0;
};

struct PathTraceRendererOptions {
  RendererOptions device;    // main device: auto | gpu | cpu | <index> | host, memory limit, host threads
  unsigned cpu_threads = 0;  // CPU helper threads beside the main device (--cpu-threads)
  // On an OpenCL device, keep each tile's sums in device memory: launches are merged and tiles
  // resolved there, and only RGBA8 pixels come back. false: every launch is read back and merged
  // and resolved on the host, as with the host backend.
  bool device_sums = true;
};

class PathTraceRenderer {
 public:
  // The scene must outlive the renderer.
  PathTraceRenderer(const PackedScene& scene, const PathTraceRendererOptions& options);
  ~PathTraceRenderer();

  std::string description() const;
  uint64_t scene_device_bytes() const { return backend_->scene_device_bytes(); }
  bool is_opencl() const { return backend_->is_opencl(); }
  // Tiles keep their sums in device memory and resolve there.
  bool sums_on_device() const { return options_.device_sums && backend_->is_opencl(); }
  const PathTraceRendererOptions& options() const { return options_; }

  // Adds samples to tile `tile_id` (rectangle `tile` of each eye image) and resolves it. A launch
  // traces at most kMaxLaunchPixelSamples pixel samples, and `stop` is polled between launches:
  // when it says so the tile's accumulation is dropped and RenderCanceled thrown.
  PtTileResult render_tile(const PtView& view, const RenderSettings& settings, const PathTraceSettings& pt,
                           uint32_t tile_id, const TileRect& tile, const StopRequested& stop = {});
  static constexpr uint64_t kMaxLaunchPixelSamples = uint64_t(1) << 22;

  // A pair of render_tiles is done: its index in `tiles`, its pixels in `out` (eye 0's, then eye
  // 1's) and its stats.
  using TileDone = std::function<void(size_t index, std::span<const uint32_t> pixels, const PtTileStats& stats)>;
  // render_tile for every pair of `tiles`, their pixels written to `out` at each pair's offset.
  // Where the device launches batches (launches_batches()) the pairs are traced together, one
  // launch a launch's worth of samples (bounded as render_tile's), and each pair is read back on
  // its own; the pixels and the accumulations are render_tile's. Every pair goes to `on_tile_done`
  // as soon as its pixels are in `out` (while the device renders the next ones), each once, before
  // render_tiles returns. Times in the stats are the batch's device times shared out by pixels, and
  // the batch's wall time until the pair was done, shared out the same way. Throws RenderCanceled
  // when `stop` says so (the accumulations of the batch it stopped dropped, its pairs handed over
  // or not).
  std::vector<PtTileStats> render_tiles(const PtView& view, const RenderSettings& settings, const PathTraceSettings& pt,
                                        std::span<const PtBatchTile> tiles, std::span<uint32_t> out,
                                        const StopRequested& stop = {}, const TileDone& on_tile_done = {});
  // An OpenCL device on the GPU code path, sums on the device and no CPU helpers (whose samples
  // join tile by tile): render_tiles launches batches. Elsewhere it goes tile by tile.
  bool launches_batches() const { return sums_on_device() && options_.cpu_threads == 0 && backend_->launches_batches(); }

  // Renders from now on with the scene's sun replaced by `sun` (none: the scene's own lights). A
  // change drops every tile's accumulation (its samples estimate another image).
  void set_sun(const std::optional<SunOverride>& sun);
  // An instanced scene's instances as placed from now on (SceneMotion::top_level() when changed();
  // the renderer starts at the packed placement, time 0), on the device and for the CPU helpers,
  // emitters included. Drops every tile's accumulation, as set_sun does. Nothing for a
  // single-level scene.
  void place_instances(const TopLevelBvh& top);

  // The tiles' accumulations (tests, ground truth in linear radiance, dropping tiles a worker lost).
  AccumulationCache& cache() { return cache_; }
  static ResolveOptions resolve_options(const PathTraceSettings& pt, float exposure);
  // The kernel parameters render_tile uses for `tile` (first_sample/samples left 0).
  static PathTraceParams kernel_params(const PtView& view, const PathTraceSettings& pt, const TileRect& tile);

 private:
  // Samples a launch of `tile` traces: pt.launch_samples (or its default), bounded so that one
  // launch of the tile stays under kMaxLaunchPixelSamples.
  uint32_t samples_per_launch(const PathTraceSettings& pt, const TileRect& tile, uint32_t eye_count) const;
  // One batch of render_tiles: pairs taking the same samples a launch, at most
  // kMaxLaunchPixelSamples a launch, each tile id once.
  void render_batch(const PtView& view, const RenderSettings& settings, const PathTraceSettings& pt,
                    std::span<const PtBatchTile> tiles, std::span<const size_t> batch, uint32_t per_launch,
                    std::span<uint32_t> out, const StopRequested& stop, const TileDone& on_tile_done,
                    std::vector<PtTileStats>& stats);

  const PackedScene& scene_;
  PathTraceRendererOptions options_;
  std::unique_ptr<PathTraceBackend> backend_;
  SceneView host_view_;       // for the CPU helpers
  ShadingData host_shading_;
  std::optional<HostInstances> host_instances_;  // an instanced scene's, for the CPU helpers
  ShadingContext host_context_;
  std::vector<LightGpu> scene_lights_;
  std::optional<SunOverride> sun_;
  AccumulationCache cache_;
};

}  // namespace tessera
