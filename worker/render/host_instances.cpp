#include "worker/render/host_instances.h"

#include "common/scene/scene_objects.h"
#include "common/scene/top_level_view.h"

namespace tessera {

HostInstances::HostInstances(const PackedScene& scene, const ShadingData& shading)
    : object_words_(object_words(scene.objects())), emitters_(scene, shading) {}

void HostInstances::place(const TopLevelBvh& top, SceneView& view, ShadingData& shading) {
  top_ = top;
  view_top_level(view, top_, object_words_);
  if (!emitters_.empty()) shading.emitters = emitters_.place(top_);
}

}  // namespace tessera
