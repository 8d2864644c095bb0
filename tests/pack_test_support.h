#pragma once
// Packs a scene for a test: no textures, no progress, fast zstd; the compact tree at `compact_cost`.
#include <filesystem>
#include <optional>

#include "scene-packer/packer.h"

namespace tessera::testing {

inline pack::PackReport pack_for_test(const std::filesystem::path& input, std::optional<std::filesystem::path> settings,
                                      const std::filesystem::path& output,
                                      double compact_cost = pack::kDefaultCompactTraversalCost) {
  pack::PackOptions o;
  o.input = input;
  o.settings = std::move(settings);
  o.output = output;
  o.load_textures = false;
  o.show_progress = false;
  o.zstd_level = 1;
  o.compact_traversal_cost = compact_cost;
  return pack::pack_scene(o);
}

}  // namespace tessera::testing
