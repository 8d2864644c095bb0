#pragma once
// A loaded, fully validated packed scene: every index in every section is checked against the
// counts it refers to, so kernels can trust the buffers (a corrupt file is an error at load
// time, never an out-of-bounds read on a device).
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "common/scene/gltf_animation.h"
#include "common/scene/scene_memory.h"
#include "common/scene/scene_nodes.h"
#include "common/scene/scene_objects.h"
#include "common/scene/tpk_file.h"
#include "common/scene/vertex_records.h"
#include "kernels/scene/scene_view.h"
#include "tpk.pb.h"

namespace tessera {

class PackedScene {
 public:
  static PackedScene load(const std::filesystem::path& path);
  static PackedScene from_contents(TpkContents contents, const std::string& name);

  const tpk::Manifest& manifest() const { return manifest_; }
  uint64_t content_hash() const { return content_hash_; }
  uint32_t triangle_count() const { return uint32_t(manifest_.triangles()); }
  uint32_t vertex_count() const { return uint32_t(manifest_.vertices()); }

  // Raw bytes of a section; empty when the scene has none of that kind.
  std::span<const uint8_t> section(tpk::SectionKind kind) const;
  template <typename T>
  std::span<const T> section_as(tpk::SectionKind kind) const {
    const auto bytes = section(kind);
    return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
  }
  // The unit-normal table as halves (empty unless normals are quantized).
  const std::vector<uint16_t>& normal_table() const { return normal_table_; }
  // Quantized vertices as 16-byte records, 4 words each, positions decoded (common/scene/vertex_records.h);
  // empty unless positions are quantized.
  const std::vector<uint32_t>& vertex_records() const { return vertex_records_; }
  // The normal-table index of each vertex; empty unless normals are quantized.
  const std::vector<uint16_t>& normal_indices() const { return normal_indices_; }
  // The kd-tree nodes traversal reads: depth-first without empty leaves (common/scene/kd_compact_layout.h).
  const std::vector<uint32_t>& kd_nodes() const { return kd_nodes_; }

  // The compact profile (common/scene/scene_memory.h). Whether the file holds a tree of its own for
  // it (KD_NODES_COMPACT; else the compact profile traverses the first tree).
  bool has_compact_tree() const { return !section(tpk::KD_NODES_COMPACT).empty(); }
  // Whether a profile traverses that tree (the compact profile where the file has one).
  bool traverses_compact_tree(SceneMemory memory) const;
  // The .tpk nodes and leaf lists of the tree a profile traverses (depth-first, as in the file).
  std::span<const uint32_t> kd_file_nodes(SceneMemory memory) const;
  std::span<const uint32_t> kd_file_leaf_refs(SceneMemory memory) const;
  // The nodes of that tree as traversal reads them (kd_nodes() for the fast profile).
  const std::vector<uint32_t>& kd_nodes(SceneMemory memory) const;
  // The compact profile's 8-byte vertices: absolute quantized coordinates (scene_pack_absolute_vertex),
  // or the .tpk's words where the cell grid is too large for them (compact_cells_wide(): the kernels
  // then read the .tpk's cell table); empty unless positions are quantized.
  std::span<const uint32_t> compact_vertices() const;
  bool compact_cells_wide() const { return compact_cells_wide_; }

  // Instanced scenes (format version 5, docs/instances.md): the objects (each one's root slot in
  // kd_nodes(), first leaf reference and object-space box), the instances (node, object) and the node
  // hierarchy with its animations. A scene without objects is single-level: all three are empty.
  bool instanced() const { return !objects_.empty(); }
  const std::vector<SceneObject>& objects() const { return objects_; }
  // The first triangle of each object (its triangles run to the next object's first).
  const std::vector<uint32_t>& object_first_triangles() const { return object_first_triangles_; }
  const std::vector<InstanceSource>& instance_sources() const { return instance_sources_; }
  const anim::AnimatedScene& scene_nodes() const { return scene_nodes_; }

  // A SceneView over host memory, for the CPU reference renderer and tests; `memory` picks the
  // vertex form and the tree (compact: TS_SCENE_CELL_VERTICES where positions are quantized).
  SceneView host_view(SceneMemory memory = SceneMemory::fast) const;
  uint32_t material_of(uint32_t triangle) const;

 private:
  void validate(const std::string& name);  // also builds vertex_records_ and normal_indices_
  void validate_objects(const std::string& name);  // instanced scenes: objects, their trees, instances, nodes

  tpk::Manifest manifest_;
  std::vector<TpkSectionData> sections_;
  std::vector<uint16_t> normal_table_;
  std::vector<uint32_t> vertex_records_;
  std::vector<uint16_t> normal_indices_;
  PositionDecoding position_decoding_{};  // the file's (quantized positions): records and the compact profile alike
  std::vector<uint32_t> kd_nodes_;
  std::vector<uint32_t> compact_kd_nodes_;  // empty without a compact tree
  bool compact_narrow_lists_ = false;       // its leaf lists are narrow (narrow_leaf_lists_fit)
  std::vector<uint32_t> compact_vertices_;  // empty where wide
  bool compact_cells_wide_ = false;
  std::vector<SceneObject> objects_;
  std::vector<uint32_t> object_first_triangles_;
  std::vector<InstanceSource> instance_sources_;
  anim::AnimatedScene scene_nodes_;
  uint64_t content_hash_ = 0;
};

// Mip levels a texture stores (version 2 files store level 0 alone).
inline uint32_t texture_levels(const tpk::Texture& texture) { return texture.mip_levels() ? texture.mip_levels() : 1; }

}  // namespace tessera
