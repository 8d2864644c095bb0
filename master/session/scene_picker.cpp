#include "master/session/scene_picker.h"

#include "common/base/error.h"
#include "common/scene/packed_scene.h"
#include "common/scene/scene_motion.h"
#include "common/scene/scene_objects.h"
#include "common/scene/top_level_bvh.h"
#include "common/scene/tpk_file.h"
#include "kernels/accel/instance_traverse.h"
#include "master/cluster/scene_file.h"

namespace tessera::master {

ScenePicker::ScenePicker(const SceneFile& scene)
    : scene_(std::make_unique<PackedScene>(PackedScene::from_contents(parse_tpk(*scene.bytes, scene.path.string()), scene.path.string()))) {
  if (auto motion = SceneMotion::of_scene(*scene_, scene.name)) motion_ = std::make_unique<SceneMotion>(std::move(*motion));
  object_words_ = object_words(scene_->objects());
}

ScenePicker::~ScenePicker() = default;

uint32_t ScenePicker::instance_count() const { return motion_ ? motion_->instance_count() : 0; }
bool ScenePicker::animated() const { return motion_ && motion_->animated(); }
double ScenePicker::duration_s() const { return motion_ ? motion_->duration() : 0.0; }

// Posed as the workers pose a frame: the clock's time, then the moved instances on top.
void ScenePicker::pose(double time, const std::map<uint32_t, Transform3x4>& placed) {
  motion_->clear_instance_transforms();
  motion_->set_time(time);
  for (const auto& [instance, world] : placed)
    if (instance < motion_->instance_count()) motion_->set_instance_transform(instance, world);
}

std::vector<Aabb> ScenePicker::instance_boxes(double time, const std::map<uint32_t, Transform3x4>& placed) {
  if (!motion_) return {};
  pose(time, placed);
  std::vector<Aabb> boxes;
  boxes.reserve(motion_->instance_count());
  for (const Instance& instance : motion_->instances()) boxes.push_back(transformed_bounds(motion_->object_bounds().at(instance.object), instance.world));
  return boxes;
}

std::optional<ScenePicker::Hit> ScenePicker::pick(const std::array<float, 3>& origin, const std::array<float, 3>& direction, double time,
                                                  const std::map<uint32_t, Transform3x4>& placed) {
  if (!motion_) return std::nullopt;
  pose(time, placed);
  const TopLevelBvh& top = motion_->top_level();
  const SceneView view = scene_->host_view();
  const InstanceView instances{top.instance_count, top.nodes.data(), top.instances.data(), object_words_.data()};
  const float3 org = make_float3(origin[0], origin[1], origin[2]), dir = make_float3(direction[0], direction[1], direction[2]);
  ::Hit hit{};
  uint32_t slot = TS_NO_INSTANCE;
  if (!instance_traverse(&view, &instances, org, dir, 0.0f, TS_INFINITY, 0, &hit, &slot) || slot == TS_NO_INSTANCE) return std::nullopt;
  Hit out;
  out.instance = instance_id(&instances, slot);
  out.distance = hit.t;
  for (int i = 0; i < 3; ++i) out.point[size_t(i)] = origin[size_t(i)] + hit.t * direction[size_t(i)];
  out.world = motion_->instances().at(out.instance).world;
  return out;
}

}  // namespace tessera::master
