#pragma once
// The emissive triangles of an instanced scene where its instances place them. Kernels sample
// emitters by area (kernels/integrators/direct_light.h); in an instanced scene an object's emissive
// triangle lights the scene once for every instance that places it, and where that instance puts
// it, so the list kernels read is rebuilt whenever the instances move: one entry an (instance,
// emissive triangle of its object), its area that of the triangle's world-space corners.
#include <cstdint>
#include <vector>

#include "common/render/shading_data.h"
#include "common/scene/packed_scene.h"
#include "common/scene/top_level_bvh.h"

namespace tessera {

class InstanceEmitters {
 public:
  // The emissive triangles of each object of `scene` (materials of type emissive in `shading`).
  InstanceEmitters(const PackedScene& scene, const ShadingData& shading);

  // The emitter list for instances placed as `top` has them: instances in the scene's order, each
  // object's emissive triangles in triangle order, each entry naming the instance's top-level slot.
  // An identity instance's areas are the object's own, to the bit, so objects under identity
  // instances light the scene as the flattened scene's list does. Empty where nothing emits.
  std::vector<EmitterGpu> place(const TopLevelBvh& top) const;

  bool empty() const { return corners_.empty(); }

 private:
  struct Emitter {
    uint32_t tri;
    float3 p0, p1, p2;  // object space
  };
  std::vector<Emitter> corners_;        // every object's emissive triangles, object after object
  std::vector<uint32_t> object_first_;  // each object's first entry in corners_; one more at the end
};

}  // namespace tessera
