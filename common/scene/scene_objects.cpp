#include "common/scene/scene_objects.h"

#include <bit>

#include "common/base/error.h"
#include "kernels/accel/instance_traverse.h"

namespace tessera {

std::vector<uint32_t> object_words(std::span<const SceneObject> objects) {
  std::vector<uint32_t> words;
  words.reserve(objects.size() * TS_OBJECT_WORDS);
  for (const SceneObject& object : objects) {
    words.push_back(object.kd_node_base);
    words.push_back(object.kd_leaf_ref_base);
    for (float v : object.bounds.min) words.push_back(std::bit_cast<uint32_t>(v));
    for (float v : object.bounds.max) words.push_back(std::bit_cast<uint32_t>(v));
  }
  return words;
}

void offset_kd_triangles(std::span<uint32_t> dfs_nodes, std::span<uint32_t> leaf_refs, uint32_t triangle_base) {
  // Slots in depth-first order: a node is one slot, an inner node holding references one more.
  for (size_t slot = 0; 2 * slot + 1 < dfs_nodes.size(); ++slot) {
    const uint32_t word0 = dfs_nodes[2 * slot];
    if (kd_node_kind(word0) == TS_KD_LEAF) {
      if (kd_leaf_count(word0) == 1) dfs_nodes[2 * slot + 1] += triangle_base;
    } else if (kd_inner_ref_count(word0) > 0) {
      ++slot;
      if (2 * slot + 1 >= dfs_nodes.size()) throw Error("kd-tree: an inner node's reference slot is missing");
      for (size_t w = 2 * slot; w < 2 * slot + 2; ++w)
        if (dfs_nodes[w] != TS_KD_NO_TRIANGLE) dfs_nodes[w] += triangle_base;
    }
  }
  for (uint32_t& ref : leaf_refs) ref += triangle_base;
}

}  // namespace tessera
