#pragma once
// Serializes the host tree into the device layout of kernels/accel/kdtree_layout.h.
#include "scene-packer/kdtree_builder.h"
#include "scene-packer/kdtree_tree.h"

namespace tessera::pack::kd {

// Fills out->nodes and out->leaf_refs (not the stats). Lists of neighbouring leaves overlap in
// leaf_refs where they share triangles, and identical lists are stored once, so runs of different
// leaves may overlap. Throws Error when the tree exceeds the layout's index ranges.
void write_layout(const Tree& tree, PackedKdTree* out);

}  // namespace tessera::pack::kd
