#include "master/cluster/scene_file.h"

#include "common/base/file_io.h"
#include "common/base/utf8.h"
#include "common/scene/packed_scene.h"
#include "common/scene/scene_motion.h"
#include "common/scene/tpk_file.h"

namespace tessera::master {

std::shared_ptr<const SceneFile> SceneFile::load(const std::filesystem::path& path) {
  auto scene = std::make_shared<SceneFile>();
  auto bytes = std::make_shared<std::vector<uint8_t>>(read_file_bytes(path));
  // The whole validation a worker runs before it renders (every offset, count and index), so a
  // crafted file is refused here instead of being pushed to, and stored by, every worker.
  const PackedScene checked = PackedScene::from_contents(parse_tpk(*bytes, path.string()), path.string());
  scene->path = path;
  scene->name = valid_utf8(path.filename().string());  // travels in a proto3 string
  scene->hash = checked.content_hash();
  scene->manifest = checked.manifest();
  if (const auto motion = SceneMotion::of_scene(checked, path.string())) {
    scene->instances = motion->instance_count();
    scene->animated = motion->animated();
    scene->duration_s = motion->duration();
  }
  scene->bytes = std::move(bytes);
  return scene;
}

}  // namespace tessera::master
