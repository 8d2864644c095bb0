#include "master/cluster/scene_file.h"

#include "common/base/file_io.h"
#include "common/scene/tpk_file.h"

namespace tessera::master {

std::shared_ptr<const SceneFile> SceneFile::load(const std::filesystem::path& path) {
  auto scene = std::make_shared<SceneFile>();
  auto bytes = std::make_shared<std::vector<uint8_t>>(read_file_bytes(path));
  TpkContents contents = parse_tpk(*bytes, path.string());
  scene->path = path;
  scene->name = path.filename().string();
  scene->hash = contents.content_hash;
  scene->manifest = std::move(contents.manifest);
  scene->bytes = std::move(bytes);
  return scene;
}

}  // namespace tessera::master
