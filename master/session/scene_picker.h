#pragma once
// Which instance a pixel shows: the master's host copy of the scene (the .tpk it serves, loaded
// once) posed as the workers pose it (the scene clock's time, the instances the pages moved), and one
// ray traced through it with the host build of two-level traversal
// (kernels/accel/instance_traverse.h), the kernels' own code. A live page picks with it before it
// grabs an object (docs/live-session.md).
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "common/scene/aabb.h"
#include "common/scene/scene_nodes.h"

namespace tessera {
class PackedScene;
class SceneMotion;
}  // namespace tessera

namespace tessera::master {

struct SceneFile;

class ScenePicker {
 public:
  // Decodes the scene file again (the master keeps only its bytes). Throws Error as loading does.
  explicit ScenePicker(const SceneFile& scene);
  ~ScenePicker();

  uint32_t instance_count() const;  // 0: a single-level scene (nothing to grab)
  bool animated() const;
  double duration_s() const;

  struct Hit {
    uint32_t instance = 0;
    float distance = 0;              // along the ray, in units of its direction's length
    std::array<float, 3> point{};    // where it meets the instance (world)
    Transform3x4 world;              // the instance's object to world at that instant
  };
  // The first instance the ray meets at scene time `time` with `placed` instances placed explicitly;
  // none where it meets nothing (or the scene has no instances).
  std::optional<Hit> pick(const std::array<float, 3>& origin, const std::array<float, 3>& direction, double time,
                          const std::map<uint32_t, Transform3x4>& placed);

  // Every instance's world box (the scene's order) at scene time `time` with `placed` placed
  // explicitly (motion_in_view.h); none for a single-level scene.
  std::vector<Aabb> instance_boxes(double time, const std::map<uint32_t, Transform3x4>& placed);

 private:
  void pose(double time, const std::map<uint32_t, Transform3x4>& placed);

  std::unique_ptr<PackedScene> scene_;
  std::unique_ptr<SceneMotion> motion_;  // none: a single-level scene
  std::vector<uint32_t> object_words_;   // the objects as kernels read them
};

}  // namespace tessera::master
