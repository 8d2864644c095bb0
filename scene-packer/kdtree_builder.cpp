#include "scene-packer/kdtree_builder.h"

#include "common/base/error.h"

namespace tessera::pack {

PackedKdTree build_kdtree(std::span<const float>, std::span<const uint32_t>, const KdBuildOptions&) {
  throw Error("kd-tree builder not available yet");
}

}  // namespace tessera::pack
