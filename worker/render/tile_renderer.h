#pragma once
// Renders tiles of a frame of a packed scene. Two backends share the kernels/ code: OpenCL
// (GPU, or PoCL on the CPU) and the host build of the same headers (`--device host`).
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "common/render/sun_override.h"
#include "common/scene/packed_scene.h"
#include "common/scene/top_level_bvh.h"
#include "kernels/device/cpu/primary_aux_cpu.h"
#include "kernels/device/cpu/raytrace_cpu.h"

namespace tessera {

using TileRect = cpu::TileRect;

// One tile of a batch: its rectangle in its eye's image, the eye, and the index of its first
// pixel in the batch's output (its pixels follow row by row).
struct BatchTile {
  TileRect rect;
  uint32_t eye = 0;
  uint64_t offset = 0;
};

struct BatchTiming {
  double launch_ms = 0;    // launch(es), to the end of the last kernel
  double readback_ms = 0;  // results to host memory
};

// Host memory for a batch's pixels: filled by the renderer, read by the tile encoders, and freed
// (or returned to the renderer's pool of pinned memory) when its last holder lets go.
struct HostPixels {
  virtual ~HostPixels() = default;
  std::span<uint32_t> pixels;
};

// Polled between launches of long work; true: give up (the work is no longer wanted).
using StopRequested = std::function<bool()>;

// Thrown by a render that gave up because StopRequested said so.
struct RenderCanceled : std::runtime_error {
  RenderCanceled() : std::runtime_error("render canceled") {}
};

class TileRenderer {
 public:
  virtual ~TileRenderer() = default;
  // Device name and backend, for logs and --json.
  virtual std::string description() const = 0;
  // Device memory the scene occupies (0 for the host backend).
  virtual uint64_t scene_device_bytes() const = 0;
  // Renders `tile` of the frame `camera` describes: RGBA8 words, tile rows top to bottom.
  virtual void render_raytrace(const CameraParams& camera, const RenderSettings& settings, const TileRect& tile,
                               std::span<uint32_t> out) = 0;
  // Memory for `count` pixels of a batch's output (pinned where the device gains from it).
  virtual std::shared_ptr<HostPixels> host_pixels(size_t count);
  // Renders every tile in `tiles` (eye 0 with cameras[0], eye 1 with cameras[1]) in as few
  // launches as the backend can, pixels equal to render_raytrace's. `out` holds them at each tile's
  // offset. Throws RenderCanceled when `stop` says so between launches. This default renders tile
  // by tile.
  virtual BatchTiming render_raytrace_batch(const std::array<CameraParams, 2>& cameras, const RenderSettings& settings,
                                            std::span<const BatchTile> tiles, std::span<uint32_t> out,
                                            const StopRequested& stop);
  // True where render_raytrace_batch renders a batch in one launch (the GPU code path). False where
  // it goes tile by tile (the host backend, CPU code paths): there a batch saves nothing and only
  // holds its finished tiles back until its last one is done.
  virtual bool launches_batches() const { return false; }
  // Depth and coverage of every tile in `tiles` (kernels/integrators/primary_aux.h: one primary ray
  // through each pixel's centre, shadow rays only where it finds the shadow catcher), one aux_pack
  // word a pixel at each tile's offset, as render_raytrace_batch lays out colours. Every mode's
  // frames take them from here (the cameras without aa_sample's jitter). One launch a batch on
  // OpenCL devices; throws RenderCanceled when `stop` says so before it starts.
  virtual BatchTiming render_aux_batch(const std::array<CameraParams, 2>& cameras, const RenderSettings& settings,
                                       const AuxSettings& aux, std::span<const BatchTile> tiles, std::span<uint32_t> out,
                                       const StopRequested& stop) = 0;
  // Every render after this call lights the scene with its sun replaced by `sun` (common/render/
  // sun_override.h; none: the scene's own lights). The lights the kernels read are rewritten only
  // when this changes them.
  virtual void set_sun(const std::optional<SunOverride>& sun) = 0;

  // An instanced scene's instances as placed from now on (common/scene/scene_motion.h: call with
  // SceneMotion::top_level() when changed()). Renderers of single-level scenes ignore it; the renderer
  // keeps its own copy.
  virtual void place_instances(const TopLevelBvh& top) {}
};

struct RendererOptions {
  std::string device = "auto";             // auto | gpu | cpu | <index> | host
  std::optional<uint64_t> gpu_memory_limit;  // --gpu-mem-limit
  unsigned host_threads = 0;               // host backend: 0 = all cores
  SceneMemory scene_memory = SceneMemory::fast;  // how the scene lies in memory (common/scene/scene_memory.h)
};

// The scene must outlive the renderer. Instanced scenes render in the raytrace mode on every device
// (kernels/accel/scene_trace.h).
std::unique_ptr<TileRenderer> make_tile_renderer(const PackedScene& scene, const RendererOptions& options);

// Throws Error("<what> ...") for an instanced scene where `what` (tessera-bench rays) does not trace
// instances yet: nothing is drawn from the first object alone.
void require_single_level(const PackedScene& scene, const std::string& what);

}  // namespace tessera
