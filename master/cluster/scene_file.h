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

  // Reads and fully checks the file (a corrupt scene is refused here, not on every worker).
  static std::shared_ptr<const SceneFile> load(const std::filesystem::path& path);
};

}  // namespace tessera::master
