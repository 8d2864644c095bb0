#pragma once
// The packing pipeline behind tessera-pack: load -> settings -> replicate -> quantize ->
// kd-tree -> sections -> .tpk, with a report of sizes, tree statistics and timings.
#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scene-packer/kdtree_builder.h"
#include "scene-packer/quantizer.h"
#include "tpk.pb.h"

namespace tessera::pack {

// The compact profile's tree (docs/scene-memory.md): built with small leaves and much empty space
// cut off (SAH traversal cost 2.0, empty-space bonus 0.2), then pruned to 15 bytes a triangle in the
// device's compact layout (scene-packer/kdtree_prune.h), where rays rarely go first. Crytek Sponza:
// mesh + kd-tree 29.7 bytes a triangle in that profile, 0.90 / 0.85-0.88 / 0.91-0.92x the fast profile's
// primary / shadow / diffuse rays on the lent H200; of the builds tried it gave the most shadow rays,
// the profile's weakest kind (docs/scene-memory.md).
inline constexpr double kDefaultCompactTraversalCost = 2.0;
inline constexpr double kDefaultCompactEmptyBonus = 0.2;
inline constexpr double kDefaultCompactTreeBudget = 15.0;
// The SAH cost the paper's tables build their three variants at (--paper-tables): one cost for all
// three, as in the paper; the tables in the README and docs/scene-memory.md are at this cost.
inline constexpr double kPaperTablesTraversalCost = 2.75;

struct PackOptions {
  std::filesystem::path input;
  std::filesystem::path output;
  std::optional<std::filesystem::path> settings;  // default: <stem>.scene.txtpb beside the input
  // Folders searched for meshes the settings include (scene-packer/compose.h), after the settings
  // file's own folder; $TESSERA_SHARED_DIR/scenes and the checkout's ../shared/scenes follow.
  std::vector<std::filesystem::path> include_dirs;
  QuantizeOptions quantize;
  KdBuildOptions kdtree;
  // The compact scene-memory profile's tree (KD_NODES_COMPACT, docs/scene-memory.md): kdtree's
  // options with this SAH traversal cost and empty-space bonus, pruned to compact_tree_budget bytes a
  // triangle (0: not pruned); a traversal cost of 0: no compact tree (that profile then traverses
  // the first tree).
  double compact_traversal_cost = kDefaultCompactTraversalCost;
  double compact_empty_bonus = kDefaultCompactEmptyBonus;
  double compact_tree_budget = kDefaultCompactTreeBudget;
  // Also build the standard, Choi and Seo trees at kPaperTablesTraversalCost for the paper's tables
  // (Seo et al. 2022, Tables 5 and 6): PackReport::paper_tables.
  bool paper_tables = false;
  std::array<uint32_t, 3> replicate{1, 1, 1};
  // Objects and instances (docs/instances.md): with instances a glTF's meshes become objects and its
  // nodes instances, its animations stored; with keep_obj_groups an OBJ's groups become objects.
  // Otherwise (and for a single static object) the scene is one flattened mesh, as before.
  bool instances = false;
  bool keep_obj_groups = false;
  bool load_textures = true;
  uint32_t max_texture_size = 1024;
  int zstd_level = 9;
  // Texels compress at most at this level: JPEG-sourced texels gain little from higher levels
  // (level 9 stores Crytek Sponza's in 3% fewer bytes than 6) and would take half the pack time.
  int texture_zstd_level = 6;
  bool show_progress = true;  // progress bars on stderr (only drawn on a terminal)
};

struct PackReport {
  tpk::Manifest manifest;  // as written, with the section table
  uint64_t input_triangles = 0;
  uint64_t texcoord_triangles_clamped = 0;
  double position_precision = 0.0;
  double max_position_error = 0.0;
  KdTreeStats kdtree;
  std::optional<KdTreeStats> compact_kdtree;  // the compact profile's own tree, where built
  uint64_t compact_kdtree_file_bytes = 0;     // its nodes and leaf lists in the file's layout
  double compact_traversal_cost = 0, compact_empty_bonus = 0, compact_tree_budget = 0;
  // Device memory of the written scene in each profile (common/render/scene_uploads.h, the default
  // node layout): every buffer, and the mesh + kd-tree part ray traversal reads.
  struct ProfileBytes {
    uint64_t device = 0, mesh_tree = 0;
  };
  ProfileBytes fast, compact;
  nlohmann::json paper_tables;  // PackOptions::paper_tables (null otherwise)
  uint64_t file_bytes = 0;
  uint64_t mesh_device_bytes = 0;     // geometry buffers incl. the normal table
  uint64_t normal_table_bytes = 0;    // of those, the fixed table of quantized normals (0.39 MB whatever the scene)
  uint64_t kdtree_device_bytes = 0;
  uint64_t texture_device_bytes = 0;
  uint64_t mesh_original_bytes = 0;   // 32 nv + 12 nf + 8: the float layout (paper §3.1.2)
  double seconds_load = 0, seconds_quantize = 0, seconds_kdtree = 0, seconds_write = 0, seconds_total = 0;
  uint64_t peak_memory_bytes = 0;
  std::vector<std::string> warnings;  // what the input holds that the packed scene does not show as written
  std::vector<std::string> notes;     // defaults the packer chose (lights, camera)
};

PackReport pack_scene(const PackOptions& options);
nlohmann::json report_to_json(const PackReport& report);
// A tree's node counts, depth and SAH cost as --json prints them (every tree the packer reports).
nlohmann::json kd_tree_stats_json(const KdTreeStats& stats);

}  // namespace tessera::pack
