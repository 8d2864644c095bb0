#pragma once
// The kd-tree and scene-compression tables of Seo et al. 2022 on a scene's own trees
// (tessera-pack --paper-tables, docs/scene-memory.md): Table 5a (kd-tree bytes of the standard,
// Choi and Seo trees and their ratio to the standard one), Table 5b (their node counts) and
// Table 6 (the float mesh with the standard tree against the compact profile).
#include <nlohmann/json.hpp>

#include "scene-packer/kdtree_builder.h"
#include "scene-packer/quantizer.h"

namespace tessera::pack {

// Builds the three variants with `options` at SAH traversal cost `traversal_cost`; Table 6 is
// completed by add_scene_compression once the compact profile's bytes are known.
nlohmann::json paper_tables(const QuantizedMesh& mesh, const KdBuildOptions& options, double traversal_cost);

// Table 6: float mesh (32 bytes a vertex, 12 a triangle) + the standard tree of `tables`, against
// the compact profile's mesh + kd-tree bytes on a device.
void add_scene_compression(nlohmann::json& tables, uint64_t float_mesh_bytes, uint64_t compact_mesh_tree_bytes,
                           uint64_t triangles);

}  // namespace tessera::pack
