#pragma once
// Renders tiles of a frame of a packed scene. Two backends share the kernels/ code: OpenCL
// (GPU, or PoCL on the CPU) and the host build of the same headers (`--device host`).
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "common/scene/packed_scene.h"
#include "kernels/device/cpu/raytrace_cpu.h"

namespace tessera {

using TileRect = cpu::TileRect;

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
};

struct RendererOptions {
  std::string device = "auto";             // auto | gpu | cpu | <index> | host
  std::optional<uint64_t> gpu_memory_limit;  // --gpu-mem-limit
  unsigned host_threads = 0;               // host backend: 0 = all cores
};

// The scene must outlive the renderer.
std::unique_ptr<TileRenderer> make_tile_renderer(const PackedScene& scene, const RendererOptions& options);

}  // namespace tessera
