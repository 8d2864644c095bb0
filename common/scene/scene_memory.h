#pragma once
// The two ways a packed scene can lie in device memory (docs/scene-memory.md):
//   fast     quantized positions decoded once at load into 16-byte vertex records, the .tpk's
//            first kd-tree (small leaves): the most rays a second
//   compact  12 bytes a vertex (absolute quantized coordinates and texture coordinate), decoded in
//            the triangle test (TS_SCENE_CELL_VERTICES),
//            and the .tpk's compact kd-tree (larger leaves) where it has one: the fewest bytes
// Both trace bit-identical positions and report the same hit for every ray
// (kernels/accel/kdtree_traverse.h: equally near hits go to the lowest triangle index).
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

enum class SceneMemory { fast, compact };

// "fast" or "compact" (SceneStatus.scene_memory, --scene-memory).
const char* scene_memory_name(SceneMemory memory);
std::optional<SceneMemory> parse_scene_memory(std::string_view name);

// What a worker (or tessera-render) is asked for: one profile, or automatic: fast where the scene
// fits the scene-memory budget, else compact (worker/render/scene_memory_choice.h).
enum class SceneMemoryMode { automatic, fast, compact };
// "auto", "fast" or "compact".
std::optional<SceneMemoryMode> parse_scene_memory_mode(std::string_view name);

}  // namespace tessera
