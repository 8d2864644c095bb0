#pragma once
// A host SceneView of an instanced scene over a top level (the host renderers of every mode).
#include <cstdint>
#include <vector>

#include "common/scene/top_level_bvh.h"
#include "kernels/scene/scene_view.h"

namespace tessera {

// `view` traces `top` from now on (its pointers into `top` and `object_words`, which must outlive
// it); its box is the instances' where they are now (ray set-up and epsilons read it).
void view_top_level(SceneView& view, const TopLevelBvh& top, const std::vector<uint32_t>& object_words);

}  // namespace tessera
