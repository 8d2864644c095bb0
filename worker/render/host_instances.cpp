#include "worker/render/host_instances.h"

#include "common/scene/scene_objects.h"

namespace tessera {

HostInstances::HostInstances(const PackedScene& scene, const ShadingData& shading)
    : object_words_(object_words(scene.objects())), emitters_(scene, shading) {}

void HostInstances::place(const TopLevelBvh& top, SceneView& view, ShadingData& shading) {
  top_ = top;
  view.instance_count = top_.instance_count;
  view.tlas_nodes = top_.nodes.data();
  view.instance_records = top_.instances.data();
  view.objects = object_words_.data();
  view.bounds_min_x = top_.bounds.min[0], view.bounds_min_y = top_.bounds.min[1], view.bounds_min_z = top_.bounds.min[2];
  view.bounds_max_x = top_.bounds.max[0], view.bounds_max_y = top_.bounds.max[1], view.bounds_max_z = top_.bounds.max[2];
  if (!emitters_.empty()) shading.emitters = emitters_.place(top_);
}

}  // namespace tessera
