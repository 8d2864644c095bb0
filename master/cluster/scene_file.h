#pragma once
// The scene as the master holds it: the .tpk file's bytes (to push to workers that lack it),
// its content hash (the scene's identity on the wire) and its manifest (camera, bounds).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tpk.pb.h"

namespace tessera::master {

struct SceneFile {
  std::filesystem::path path;
  std::string name;  // file name, suggested to workers for a pushed copy
  std::shared_ptr<const std::vector<uint8_t>> bytes;
  uint64_t hash = 0;
  tpk::Manifest manifest;
  // Things that move (docs/instances.md, docs/animation.md): its instances (0: a single-level scene,
  // nothing to grab) and whether its animations play (else every scene time renders the same, on
  // workers of any version).
  uint32_t instances = 0;
  bool animated = false;
  double duration_s = 0;  // the longest animation's

  // Reads and fully checks the file (a corrupt scene is refused here, not on every worker).
  static std::shared_ptr<const SceneFile> load(const std::filesystem::path& path);
};

}  // namespace tessera::master
