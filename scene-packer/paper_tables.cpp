#include "scene-packer/paper_tables.h"

#include "common/scene/kd_compact_layout.h"
#include "scene-packer/packer.h"

namespace tessera::pack {

nlohmann::json paper_tables(const QuantizedMesh& mesh, const KdBuildOptions& options, double traversal_cost) {
  using nlohmann::json;
  json variants = json::object();
  uint64_t standard_file = 0, standard_device = 0;
  for (const auto& [variant, name] : {std::pair{KdVariant::Standard, "standard"}, std::pair{KdVariant::Choi, "choi"},
                                      std::pair{KdVariant::Seo, "seo"}}) {
    KdBuildOptions o = options;
    o.variant = variant;
    o.traversal_cost = traversal_cost;
    o.progress = nullptr;
    const PackedKdTree tree = build_kdtree(mesh.decoded_positions, mesh.triangles, o);
    // The file's layout (nodes, shared leaf lists) and the device's (empty leaves left out, lists
    // beside their leaves: common/scene/kd_compact_layout.h).
    const uint64_t file = 4 * (tree.nodes.size() + tree.leaf_refs.size());
    const uint64_t device = 4 * make_compact_kd_nodes(tree.nodes, tree.leaf_refs).size();
    if (variant == KdVariant::Standard) standard_file = file, standard_device = device;
    json row = kd_tree_stats_json(tree.stats);
    row["file_bytes"] = file;
    row["device_bytes"] = device;
    row["file_ratio_to_standard"] = double(file) / double(standard_file);
    row["device_ratio_to_standard"] = double(device) / double(standard_device);
    variants[name] = std::move(row);
  }
  return {{"sah_traversal_cost", traversal_cost}, {"kd_trees", variants}};
}

void add_scene_compression(nlohmann::json& tables, uint64_t float_mesh_bytes, uint64_t compact_mesh_tree_bytes,
                           uint64_t triangles) {
  const uint64_t standard = tables["kd_trees"]["standard"]["file_bytes"].get<uint64_t>();
  const uint64_t uncompressed = float_mesh_bytes + standard;
  tables["scene_compression"] = {
      {"float_mesh_bytes", float_mesh_bytes},
      {"standard_kdtree_bytes", standard},
      {"uncompressed_bytes", uncompressed},
      {"uncompressed_bytes_per_triangle", double(uncompressed) / double(triangles)},
      {"compact_profile_bytes", compact_mesh_tree_bytes},
      {"compact_profile_bytes_per_triangle", double(compact_mesh_tree_bytes) / double(triangles)},
      {"compression_ratio", double(uncompressed) / double(compact_mesh_tree_bytes)},
  };
}

}  // namespace tessera::pack
