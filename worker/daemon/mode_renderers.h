#pragma once
// The renderers of the `pathtrace` and `vct` modes a loaded scene keeps, made on the render
// thread when a frame (or LoadScene.prepare_vct) first needs them and reused afterwards: one path
// tracer per scene, holding every tile's progressive accumulation, and the scene's voxel grids by
// grid size and fill option (voxelized once, relit when a request moves a light).
#include <array>
#include <optional>

#include "common/render/sun_override.h"
#include "worker/daemon/scene_store.h"

namespace tessera::worker {

// Render thread only.
PathTraceRenderer& pathtrace_renderer(LoadedScene& scene, const PathTraceRendererOptions& options);

// The grid for `options`, voxelized on the device if this scene has none yet (at most
// kMaxVctGrids per scene; the least recently used goes first). Render thread only.
inline constexpr size_t kMaxVctGrids = 2;
VctGridSlot& vct_grid(LoadedScene& scene, const RendererOptions& device, const VctOptions& options);

// Relights the grid when the lights a request asks for (the scene's with its sun replaced by `sun`,
// then light `index` moved to `move_to`) differ from the current ones. Throws Error on a light index
// the scene lacks.
void set_vct_lights(VctGridSlot& slot, const std::optional<std::array<float, 3>>& move_to, uint32_t index,
                    const std::optional<SunOverride>& sun = std::nullopt);

}  // namespace tessera::worker
