#include "common/scene/scene_memory.h"

namespace tessera {

const char* scene_memory_name(SceneMemory memory) { return memory == SceneMemory::compact ? "compact" : "fast"; }

std::optional<SceneMemory> parse_scene_memory(std::string_view name) {
  if (name == "fast") return SceneMemory::fast;
  if (name == "compact") return SceneMemory::compact;
  return std::nullopt;
}

std::optional<SceneMemoryMode> parse_scene_memory_mode(std::string_view name) {
  if (name == "auto") return SceneMemoryMode::automatic;
  if (name == "fast") return SceneMemoryMode::fast;
  if (name == "compact") return SceneMemoryMode::compact;
  return std::nullopt;
}

}  // namespace tessera
