#include "scene-packer/packer.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <mutex>

#include "common/base/error.h"
#include "common/base/usage_error.h"
#include "common/base/utf8.h"
#include "common/base/memory_usage.h"
#include "common/base/progress.h"
#include "common/render/framing.h"
#include "common/scene/aabb.h"
#include "common/scene/mesh_loader.h"
#include "common/scene/mip_chain.h"
#include "common/scene/normal_table.h"
#include "common/scene/scene_settings.h"
#include "common/scene/tpk_file.h"
#include "common/render/scene_uploads.h"
#include "common/scene/packed_scene.h"
#include "common/scene/vertex_records.h"
#include "scene-packer/compose.h"
#include "scene-packer/default_lighting.h"
#include "scene-packer/object_packing.h"
#include "scene-packer/paper_tables.h"
#include "scene-packer/replicate.h"
#include "scene-packer/scene_values.h"

namespace tessera::pack {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

tpk::Vec3 vec3(float x, float y, float z) {
  tpk::Vec3 v;
  v.set_x(x);
  v.set_y(y);
  v.set_z(z);
  return v;
}

// A view of the whole box from outside when neither the file nor the settings give a camera.
tpk::Camera default_camera(const Aabb& box) {
  constexpr float kFov = 60.0f;
  const Pose pose = framing_pose(box, kFov);
  tpk::Camera camera;
  *camera.mutable_position() = vec3(pose.position[0], pose.position[1], pose.position[2]);
  camera.set_qw(pose.orientation[0]);
  camera.set_qx(pose.orientation[1]);
  camera.set_qy(pose.orientation[2]);
  camera.set_qz(pose.orientation[3]);
  camera.set_vertical_fov_degrees(kFov);
  return camera;
}

tpk::KdVariant to_proto(KdVariant v) {
  switch (v) {
    case KdVariant::Standard: return tpk::KD_STANDARD;
    case KdVariant::Choi: return tpk::KD_CHOI;
    case KdVariant::Seo: return tpk::KD_SEO;
  }
  return tpk::KD_SEO;
}

// The output may replace a packed scene, never anything else: "-o scene.gltf" or "-o scene.bin" by
// mistake would otherwise destroy the very files the scene is packed from.
void refuse_overwriting_other_files(const std::filesystem::path& output) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(output, ec) || std::filesystem::file_size(output, ec) == 0) return;
  std::ifstream file(output, std::ios::binary);
  char magic[sizeof(kTpkMagic)] = {};
  file.read(magic, sizeof(magic));
  if (!file || std::memcmp(magic, kTpkMagic, sizeof(magic)) != 0)
    throw Error("'" + output.string() + "' exists and is not a packed scene (.tpk): not overwriting it; remove it or choose another -o");
}

bool is_mesh_section(tpk::SectionKind kind) {
  return kind != tpk::KD_NODES && kind != tpk::KD_LEAF_REFS && kind != tpk::KD_NODES_COMPACT &&
         kind != tpk::KD_LEAF_REFS_COMPACT && kind != tpk::TEXELS && kind != tpk::SCENE_OBJECTS &&
         kind != tpk::SCENE_INSTANCES && kind != tpk::SCENE_NODES;
}

// The manifest's description of a tree: the build options of `first`, the counts of `stats`.
tpk::KdTreeInfo kd_tree_info(const tpk::KdTreeInfo& first, const KdTreeStats& stats) {
  tpk::KdTreeInfo kd = first;
  kd.set_inner_nodes_without_refs(stats.inner_nodes_without_refs);
  kd.set_inner_nodes_with_refs(stats.inner_nodes_with_refs);
  kd.set_leaves(stats.leaves);
  kd.set_leaf_references(stats.leaf_references);
  kd.set_inner_references(stats.inner_references);
  kd.set_max_depth(stats.max_depth);
  kd.set_sah_cost(stats.sah_cost);
  return kd;
}

}  // namespace

PackReport pack_scene(const PackOptions& options) {
  const auto start = Clock::now();
  PackReport report;
  refuse_overwriting_other_files(options.output);

  // ---- load ----
  MeshLoadOptions load_options;
  load_options.load_textures = options.load_textures;
  load_options.max_texture_size = options.max_texture_size;
  // The input is a mesh, or a settings file that composes the whole scene (compose.h).
  const bool composed_input = options.input.filename().string().ends_with(".scene.txtpb");
  if (composed_input && options.settings)
    throw Error("the input " + options.input.string() + " is a settings file already; drop --settings");
  settings::SceneSettings scene_settings;
  const auto settings_path =
      composed_input ? std::optional(options.input) : options.settings ? options.settings : settings_beside(options.input);
  if (settings_path) scene_settings = read_scene_settings(*settings_path);
  // Objects and instances where asked for (a glTF's meshes and nodes with --instances, an OBJ's groups
  // with --keep-obj-groups); a single static object packs as one mesh, byte for byte as without.
  const std::string input_name = options.input.string();
  const bool gltf_input = input_name.ends_with(".gltf") || input_name.ends_with(".glb");
  const bool obj_input = input_name.ends_with(".obj") || input_name.ends_with(".obj.zst");
  if ((options.instances && !gltf_input) || (options.keep_obj_groups && !obj_input))
    throw UsageError(options.instances ? "--instances takes a glTF input (.gltf, .glb)" : "--keep-obj-groups takes an OBJ input");
  load_options.objects = (options.instances || options.keep_obj_groups) && !composed_input;
  if (load_options.objects && has_composition(scene_settings))
    throw UsageError(input_name + ": the settings compose a scene of several meshes, which packs flattened: drop --instances / --keep-obj-groups");
  TriangleMesh mesh = composed_input ? TriangleMesh{} : load_mesh(options.input, load_options);
  anim::AnimatedScene object_hierarchy;
  if (load_options.objects) {
    object_hierarchy = object_nodes(options.input, mesh);
    if (!worth_instancing(mesh, object_hierarchy)) {
      load_options.objects = false;
      mesh = load_mesh(options.input, load_options);
    }
  }
  const bool instanced = load_options.objects;
  if (instanced && options.replicate != std::array<uint32_t, 3>{1, 1, 1})
    throw UsageError(input_name + ": --replicate copies one flattened mesh, not an instanced scene");
  if (settings_path) {
    apply_scene_settings(scene_settings, mesh);
    if (has_composition(scene_settings)) {
      ComposeOptions compose;
      compose.settings_dir = settings_path->parent_path();
      compose.include_dirs = options.include_dirs;
      if (const char* shared = std::getenv("TESSERA_SHARED_DIR"); shared && *shared)
        compose.include_dirs.push_back(std::filesystem::path(shared) / "scenes");
#ifdef TESSERA_DEFAULT_SHARED_DIR
      compose.include_dirs.push_back(std::filesystem::path(TESSERA_DEFAULT_SHARED_DIR) / "scenes");
#endif
      compose.load = load_options;
      compose_scene(scene_settings, compose, mesh);
    }
  }
  if (mesh.triangle_count() == 0) throw Error(options.input.string() + ": the scene has no triangles");
  check_scene_values(mesh, options.input.string());
  mesh = replicate_mesh(mesh, options.replicate);
  report.input_triangles = mesh.triangle_count();
  report.seconds_load = seconds_since(start);

  // ---- quantize ----
  auto t = Clock::now();
  const QuantizedMesh q = quantize_mesh(mesh, options.quantize);
  report.seconds_quantize = seconds_since(t);
  report.texcoord_triangles_clamped = q.texcoord_triangles_clamped;
  report.position_precision = q.position_precision;
  report.max_position_error = q.max_position_error;

  // ---- kd-tree ----
  t = Clock::now();
  KdBuildOptions kd_options = options.kdtree;
  KdBuildOptions compact_options = kd_options;
  compact_options.traversal_cost = options.compact_traversal_cost;
  compact_options.empty_bonus = options.compact_empty_bonus;
  compact_options.byte_budget_per_triangle = options.compact_tree_budget;
  // Both trees build at once; one bar shows their mean progress.
  std::optional<ProgressBar> bar;
  std::mutex bar_mutex;
  std::array<double, 2> done{0.0, options.compact_traversal_cost > 0 ? 0.0 : 1.0};
  if (options.show_progress && !kd_options.progress) {
    bar.emplace(options.compact_traversal_cost > 0 ? "kd-trees" : "kd-tree");
    auto progress_of = [&](size_t which) {
      return [&, which](double f) {
        const std::lock_guard lock(bar_mutex);
        done[which] = f;
        bar->update(0.5 * (done[0] + done[1]), std::to_string(q.triangle_count()) + " triangles");
      };
    };
    kd_options.progress = progress_of(0);
    compact_options.progress = progress_of(1);
  }
  std::optional<PackedObjects> objects;
  if (instanced) {  // one tree an object, no compact tree (that profile traverses these)
    objects = pack_objects(q, mesh.instances, object_hierarchy, options.kdtree, input_name);
  }
  std::future<PackedKdTree> compact_future;
  if (options.compact_traversal_cost > 0 && !instanced)
    compact_future = std::async(std::launch::async,
                                [&] { return build_kdtree(q.decoded_positions, q.triangles, compact_options); });
  PackedKdTree tree = instanced ? PackedKdTree{std::move(objects->kd_nodes), std::move(objects->kd_leaf_refs), objects->stats}
                                : build_kdtree(q.decoded_positions, q.triangles, kd_options);
  std::optional<PackedKdTree> compact_tree;
  if (compact_future.valid()) {
    compact_tree = compact_future.get();
    report.compact_kdtree = compact_tree->stats;
    report.compact_traversal_cost = options.compact_traversal_cost;
    report.compact_empty_bonus = options.compact_empty_bonus;
    report.compact_tree_budget = options.compact_tree_budget;
    report.compact_kdtree_file_bytes = 4 * (compact_tree->nodes.size() + compact_tree->leaf_refs.size());
  }
  if (bar) {
    bar->finish();
    kd_options.progress = nullptr;
  }
  if (options.paper_tables)
    report.paper_tables = paper_tables(q, kd_options, kPaperTablesTraversalCost);
  report.seconds_kdtree = seconds_since(t);
  report.kdtree = tree.stats;

  // ---- manifest ----
  tpk::Manifest& m = report.manifest;
  m.set_source(valid_utf8(options.input.filename().string()));  // a proto3 string: UTF-8 only
  m.set_triangles(q.triangle_count());
  m.set_vertices(q.vertex_count);
  m.set_degenerate_triangles_dropped(q.degenerate_triangles_dropped);
  Aabb box;
  for (size_t v = 0; v < q.vertex_count; ++v)
    box.extend({q.decoded_positions[3 * v], q.decoded_positions[3 * v + 1], q.decoded_positions[3 * v + 2]});
  *m.mutable_bounds()->mutable_min() = vec3(box.min[0], box.min[1], box.min[2]);
  *m.mutable_bounds()->mutable_max() = vec3(box.max[0], box.max[1], box.max[2]);
  *m.mutable_quantization() = q.quantization;
  if (instanced) {  // bounds above are the objects' own (object space); the instances at time 0 lie here
    m.set_objects(uint32_t(q.object_first_triangles.size()));
    m.set_instances(uint32_t(mesh.instances.size()));
    box = objects->world_bounds;
    *m.mutable_world_bounds()->mutable_min() = vec3(box.min[0], box.min[1], box.min[2]);
    *m.mutable_world_bounds()->mutable_max() = vec3(box.max[0], box.max[1], box.max[2]);
  }
  for (size_t i = 0; i < mesh.materials.size(); ++i) {
    tpk::Material* material = m.add_materials();
    *material = mesh.materials[i];
    material->set_name(valid_utf8(material->name()));
    if (!q.material_texcoord_integer_bits.empty()) material->set_texcoord_integer_bits(q.material_texcoord_integer_bits[i]);
  }
  uint64_t texel_offset = 0;
  std::vector<uint8_t> texels;
  for (const auto& texture : mesh.textures) {
    tpk::Texture* entry = m.add_textures();
    entry->set_name(valid_utf8(texture.name));
    entry->set_width(texture.width);
    entry->set_height(texture.height);
    entry->set_texel_offset(texel_offset);
    entry->set_has_alpha_mask(texture.has_alpha_mask);
    entry->set_mip_levels(stored_mip_levels(texture.width, texture.height));
    const std::vector<uint8_t> chain = build_mip_chain(texture);
    texel_offset += chain.size() / 4;
    texels.insert(texels.end(), chain.begin(), chain.end());
  }
  // Lights of the scene file, then the settings'; a scene with none gets the default sun and sky.
  for (const auto& light : mesh.point_lights) *m.add_point_lights() = light;
  for (const auto& light : scene_settings.point_lights()) *m.add_point_lights() = light;
  for (const auto& light : mesh.directional_lights) *m.add_directional_lights() = light;
  for (const auto& light : scene_settings.directional_lights()) *m.add_directional_lights() = light;
  report.warnings = mesh.warnings;
  if (!scene_has_lights(mesh, size_t(m.point_lights_size()), size_t(m.directional_lights_size()))) {
    const DefaultLighting lighting = default_lighting();
    *m.add_directional_lights() = lighting.sun;
    m.set_sky_ambient(lighting.sky_ambient);
    report.notes.push_back(describe(lighting));
  }
  // The settings' view, else the scene file's, else one framing the bounds from outside.
  if (const auto camera = settings_camera(scene_settings)) {
    *m.mutable_camera() = *camera;
  } else if (mesh.camera) {
    *m.mutable_camera() = *mesh.camera;
  } else {
    *m.mutable_camera() = default_camera(box);
    report.notes.push_back("the scene has no camera: the default view frames its bounds from outside");
  }
  if (m.camera().vertical_fov_degrees() <= 0.0f) m.mutable_camera()->set_vertical_fov_degrees(60.0f);
  m.set_vct_grid(scene_settings.vct_grid());
  if (scene_settings.has_shadow_catcher()) *m.mutable_shadow_catcher() = scene_settings.shadow_catcher();
  m.set_scene_scale(scene_settings.has_scene_scale() ? scene_settings.scene_scale() : 1.0f);
  tpk::KdTreeInfo* kd = m.mutable_kdtree();
  kd->set_variant(to_proto(options.kdtree.variant));
  kd->set_tau_occupancy(options.kdtree.tau_occupancy);
  kd->set_tau_frequency(options.kdtree.tau_frequency);
  kd->set_max_path_references(options.kdtree.max_path_references);
  *kd = kd_tree_info(*kd, tree.stats);
  if (compact_tree) *m.mutable_compact_kdtree() = kd_tree_info(*kd, compact_tree->stats);

  // ---- sections (device buffers) ----
  std::vector<TpkSectionData> sections;
  sections.push_back(make_section(tpk::TRIANGLES, q.triangles));
  if (options.quantize.positions) {
    // Interleaved so a vertex is one 8-byte load: offsets, then cell | normal index << 16.
    std::vector<uint32_t> vertices(2 * q.vertex_count), cells(2 * (q.cell_table.size() / 3));
    for (size_t v = 0; v < q.vertex_count; ++v) {
      vertices[2 * v] = q.position_offsets[v];
      vertices[2 * v + 1] = q.position_cells[v] | (q.normal_indices.empty() ? 0u : uint32_t(q.normal_indices[v]) << 16);
    }
    for (size_t c = 0; c < cells.size() / 2; ++c) {
      cells[2 * c] = uint32_t(q.cell_table[3 * c]) | uint32_t(q.cell_table[3 * c + 1]) << 16;
      cells[2 * c + 1] = q.cell_table[3 * c + 2];
    }
    sections.push_back(make_section(tpk::QUANTIZED_VERTICES, vertices));
    sections.push_back(make_section(tpk::CELL_TABLE, cells));
  } else {
    sections.push_back(make_section(tpk::POSITIONS, q.positions));
  }
  if (!q.normals.empty()) sections.push_back(make_section(tpk::NORMALS, q.normals));
  if (!q.texcoords_quantized.empty()) sections.push_back(make_section(tpk::TEXCOORDS_QUANTIZED, q.texcoords_quantized));
  if (!q.texcoords.empty()) sections.push_back(make_section(tpk::TEXCOORDS, q.texcoords));
  sections.push_back(make_section(tpk::MATERIAL_RUNS, q.material_runs));
  sections.push_back(make_section(tpk::KD_NODES, tree.nodes));
  sections.push_back(make_section(tpk::KD_LEAF_REFS, tree.leaf_refs));
  if (instanced) {
    sections.push_back(make_section(tpk::SCENE_OBJECTS, objects->object_words));
    sections.push_back(make_section(tpk::SCENE_INSTANCES, objects->instance_words));
    sections.push_back(make_section(tpk::SCENE_NODES, objects->scene_nodes));
  }
  if (compact_tree) {
    sections.push_back(make_section(tpk::KD_NODES_COMPACT, compact_tree->nodes));
    sections.push_back(make_section(tpk::KD_LEAF_REFS_COMPACT, compact_tree->leaf_refs));
  }
  if (!texels.empty())
    sections.push_back({tpk::TEXELS, std::move(texels), std::min(options.zstd_level, options.texture_zstd_level)});

  t = Clock::now();
  write_tpk(options.output, m, sections, options.zstd_level);
  report.seconds_write = seconds_since(t);
  report.file_bytes = std::filesystem::file_size(options.output);

  for (const auto& s : m.sections()) {
    if (s.kind() == tpk::TEXELS)
      report.texture_device_bytes += s.raw_size();
    else if (is_mesh_section(s.kind()))
      report.mesh_device_bytes += s.raw_size();
    else if (s.kind() == tpk::KD_NODES || s.kind() == tpk::KD_LEAF_REFS)
      report.kdtree_device_bytes += s.raw_size();
  }
  if (m.quantization().positions()) {
    // In memory the quantized vertices, the cell table and the quantized texture coordinates are
    // one 16-byte record a vertex with the position decoded, and a 2-byte normal index beside it
    // (common/scene/vertex_records.h).
    for (const auto& s : m.sections())
      if (s.kind() == tpk::QUANTIZED_VERTICES || s.kind() == tpk::CELL_TABLE || s.kind() == tpk::TEXCOORDS_QUANTIZED)
        report.mesh_device_bytes -= s.raw_size();
    report.mesh_device_bytes += kVertexRecordBytes * m.vertices();
    if (m.quantization().normals()) report.mesh_device_bytes += kNormalIndexBytes * m.vertices();
  }
  if (m.quantization().normals()) report.normal_table_bytes = uint64_t(kNormalTableSize) * 6;  // halves
  report.mesh_device_bytes += report.normal_table_bytes;
  report.mesh_original_bytes = 32 * m.vertices() + 12 * m.triangles() + 8;
  {
    // What the written scene takes on a device in each profile, as a worker would load it.
    const PackedScene packed = PackedScene::load(options.output);
    for (const SceneMemory memory : {SceneMemory::fast, SceneMemory::compact}) {
      const SceneFootprint f = scene_footprint(packed, KdNodeLayout{}, memory);
      (memory == SceneMemory::fast ? report.fast : report.compact) = {f.device_bytes, f.mesh_tree_bytes};
    }
  }
  if (options.paper_tables)  // the float layout of the paper: positions, normals, texcoords; 3 indices a triangle
    add_scene_compression(report.paper_tables, 32 * m.vertices() + 12 * m.triangles(), report.compact.mesh_tree,
                          m.triangles());
  report.seconds_total = seconds_since(start);
  report.peak_memory_bytes = peak_resident_bytes();
  return report;
}

namespace {

nlohmann::json profile_json(const PackReport::ProfileBytes& b, uint64_t triangles) {
  return {{"device_bytes", b.device},
          {"mesh_tree_bytes", b.mesh_tree},
          {"mesh_tree_bytes_per_triangle", double(b.mesh_tree) / double(triangles)}};
}

nlohmann::json compact_tree_json(const PackReport& r) {
  if (!r.compact_kdtree) return nullptr;
  nlohmann::json j = kd_tree_stats_json(*r.compact_kdtree);
  j["sah_traversal_cost"] = r.compact_traversal_cost;
  j["sah_empty_bonus"] = r.compact_empty_bonus;
  j["budget_bytes_per_triangle"] = r.compact_tree_budget;
  j["pruning_merges"] = r.compact_kdtree->pruning_merges;
  j["file_bytes"] = r.compact_kdtree_file_bytes;
  return j;
}

}  // namespace

nlohmann::json kd_tree_stats_json(const KdTreeStats& s) {
  return {{"inner_nodes_without_refs", s.inner_nodes_without_refs},
          {"inner_nodes_with_refs", s.inner_nodes_with_refs},
          {"leaves", s.leaves},
          {"empty_leaves", s.empty_leaves},
          {"leaf_references", s.leaf_references},
          {"inner_references", s.inner_references},
          {"max_depth", s.max_depth},
          {"sah_cost", s.sah_cost}};
}

nlohmann::json report_to_json(const PackReport& r) {
  using nlohmann::json;
  const auto& m = r.manifest;
  const auto& q = m.quantization();
  json sections = json::array();
  for (const auto& s : m.sections())
    sections.push_back({{"name", tpk::SectionKind_Name(s.kind())}, {"raw_bytes", s.raw_size()}, {"compressed_bytes", s.stored_size()}});
  const char* variant = m.kdtree().variant() == tpk::KD_STANDARD ? "standard" : m.kdtree().variant() == tpk::KD_CHOI ? "choi" : "seo";
  json kdtree = kd_tree_stats_json(r.kdtree);
  kdtree["variant"] = variant;
  return json{
      {"source", m.source()},
      {"triangles", m.triangles()},
      {"vertices", m.vertices()},
      {"objects", m.objects()},
      {"instances", m.instances()},
      {"input_triangles", r.input_triangles},
      {"degenerate_triangles_dropped", m.degenerate_triangles_dropped()},
      {"texcoord_triangles_clamped", r.texcoord_triangles_clamped},
      {"quantization",
       {{"positions", q.positions()},
        {"normals", q.normals()},
        {"texcoords", q.texcoords()},
        {"geometry_cells", q.geometry_cells()},
        {"cell_resolution", {q.grid_x(), q.grid_y(), q.grid_z()}},
        {"cell_size", q.cell_size()},
        {"position_decode", q.positions() ? tpk::PositionDecode_Name(q.position_decode()) : ""},
        {"position_precision", r.position_precision},
        {"max_position_error", r.max_position_error}}},
      {"sections", sections},
      {"bytes",
       {{"mesh", r.mesh_device_bytes},
        {"mesh_original", r.mesh_original_bytes},
        {"normal_table", r.normal_table_bytes},
        {"kdtree", r.kdtree_device_bytes},
        {"textures", r.texture_device_bytes},
        {"mesh_plus_kdtree", r.mesh_device_bytes + r.kdtree_device_bytes},
        {"file", r.file_bytes}}},
      {"bytes_per_triangle", double(r.mesh_device_bytes + r.kdtree_device_bytes) / double(m.triangles())},
      {"kdtree", kdtree},
      {"compact_kdtree", compact_tree_json(r)},
      {"scene_memory", {{"fast", profile_json(r.fast, m.triangles())}, {"compact", profile_json(r.compact, m.triangles())}}},
      {"paper_tables", r.paper_tables},
      {"build_seconds",
       {{"load", r.seconds_load},
        {"quantize", r.seconds_quantize},
        {"kdtree", r.seconds_kdtree},
        {"write", r.seconds_write},
        {"total", r.seconds_total}}},
      {"peak_memory_bytes", r.peak_memory_bytes},
      {"warnings", r.warnings},
      {"notes", r.notes},
  };
}

}  // namespace tessera::pack
