#pragma once
// Which scene-memory profile (common/scene/scene_memory.h) a scene is loaded in. `--scene-memory
// auto` takes the fast profile where all of the scene's buffers fit the scene-memory budget, else
// the compact one, and refuses the scene, naming the bytes it needs, when even that does not fit.
// The budget is --gpu-mem-limit where given, else kDefaultSceneMemoryShare of the device's global
// memory (the rest stays for frame buffers and other programs); no buffer may exceed the device's
// largest allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE). The host backend has no device: without
// --gpu-mem-limit it takes the fast profile, with one it decides as a device with that much would.
#include <cstdint>
#include <string>

#include "common/render/scene_uploads.h"
#include "common/scene/packed_scene.h"
#include "common/scene/scene_memory.h"
#include "worker/render/tile_renderer.h"

namespace tessera {

inline constexpr double kDefaultSceneMemoryShare = 0.75;

struct SceneMemoryBudget {
  uint64_t bytes = 0;      // 0: none (the host backend without --gpu-mem-limit)
  uint64_t max_alloc = 0;  // largest single buffer (0: none)
  std::string source;      // for messages: "--gpu-mem-limit 400 MB", "75 % of <device>'s 80 GB"
};

// Opens the device's description (not the device) for the default budget.
SceneMemoryBudget scene_memory_budget(const RendererOptions& options);

struct SceneMemoryDecision {
  SceneMemory memory = SceneMemory::fast;
  uint64_t fast_bytes = 0, compact_bytes = 0;  // the scene's device bytes in each profile (0: not sized)
  std::string summary;  // one line for logs: the profile and why
};

// Throws Error("scene needs ... even in the compact profile ...") when auto finds no profile that fits.
SceneMemoryDecision choose_scene_memory(const PackedScene& scene, SceneMemoryMode mode, const RendererOptions& options);
// The same against a given budget (tests, and callers that know it).
SceneMemoryDecision choose_scene_memory(const PackedScene& scene, SceneMemoryMode mode, const SceneMemoryBudget& budget);

}  // namespace tessera
