#pragma once
// `tessera-render --mode vct`: build the voxel grid, optionally move a light (relighting the grid, not
// voxelizing it again), render the frame (one or two eyes, side by side, with optional jittered
// anti-aliasing samples) tile by tile, write the PNG and report grid memory and step times.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "common/render/sun_override.h"
#include "worker/render/vct_renderer.h"

namespace tessera {

struct VctRenderRequest {
  VctOptions options;
  VctFrameSettings frame;
  std::optional<SunOverride> sun;  // the scene's sun replaced (voxelized with it)
  std::optional<std::array<float, 3>> move_light;  // new position (or direction) of light `light_index`
  size_t light_index = 0;
  uint32_t tile_size = 256;
  uint32_t aa_samples = 1;  // jittered samples averaged in linear light (render_aa_frame)
  const TopLevelBvh* top = nullptr;  // an instanced scene's instances as placed (none: as packed)
};

// eyes: the whole-image camera of each eye (1: mono, 2: stereo side by side). Returns the process
// exit status (0). Throws Error on bad input.
int render_vct(const PackedScene& scene, const std::vector<CameraParams>& eyes, const RenderSettings& settings,
               const RendererOptions& device, const VctRenderRequest& request, const std::string& output, bool json);

}  // namespace tessera
