#include "common/scene/top_level_view.h"

namespace tessera {

void view_top_level(SceneView& view, const TopLevelBvh& top, const std::vector<uint32_t>& object_words) {
  view.instance_count = top.instance_count;
  view.tlas_nodes = top.nodes.data();
  view.instance_records = top.instances.data();
  view.objects = object_words.data();
  view.bounds_min_x = top.bounds.min[0], view.bounds_min_y = top.bounds.min[1], view.bounds_min_z = top.bounds.min[2];
  view.bounds_max_x = top.bounds.max[0], view.bounds_max_y = top.bounds.max[1], view.bounds_max_z = top.bounds.max[2];
}

}  // namespace tessera
