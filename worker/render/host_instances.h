#pragma once
// An instanced scene on the host backends (raytrace and pathtrace): the objects and a copy of the
// top level its SceneView points into, and its emitters where the instances place them
// (common/render/instance_emitters.h). One place() a change of transforms.
#include <vector>

#include "common/render/instance_emitters.h"
#include "common/render/shading_data.h"
#include "common/scene/packed_scene.h"
#include "common/scene/top_level_bvh.h"

namespace tessera {

class HostInstances {
 public:
  // `scene` must be instanced; `shading` is its ShadingData (the materials that emit).
  HostInstances(const PackedScene& scene, const ShadingData& shading);

  // Points `view` at a copy of `top` (its box the scene's: ray set-up and epsilons read it) and
  // sets shading.emitters to the instances' emissive triangles as placed. host_context() must be
  // taken again afterwards.
  void place(const TopLevelBvh& top, SceneView& view, ShadingData& shading);

 private:
  TopLevelBvh top_;
  std::vector<uint32_t> object_words_;  // TS_OBJECT_WORDS an object
  InstanceEmitters emitters_;
};

}  // namespace tessera
