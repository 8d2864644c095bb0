#include "common/scene/packed_scene.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>

#include "common/base/error.h"
#include "common/scene/kd_compact_layout.h"
#include "common/scene/mip_chain.h"
#include "common/scene/normal_table.h"
#include "common/scene/animation_codec.h"
#include "common/scene/scene_motion.h"
#include "common/scene/tpk_sections.h"
#include "common/scene/vertex_records.h"
#include "kernels/accel/kdtree_layout.h"

namespace tessera {
namespace {

constexpr float kMaxTexcoord = 65536.0f;  // times the widest texture (16384) stays below 2^31

// Children always follow their parent (so traversal cannot loop), every index in range: triangles
// in [first_triangle, nt) (an object's tree names only its own).
void validate_kd_tree(std::span<const uint32_t> nodes, std::span<const uint32_t> refs, uint64_t nt,
                      const std::function<Error(const std::string&)>& fail, uint64_t first_triangle = 0) {
  auto out_of_range = [&](uint32_t t) { return t >= nt || t < first_triangle; };
  if (nodes.size() < 2 || nodes.size() % 2) throw fail("kd-tree has no nodes");
  const uint64_t slots = nodes.size() / 2;
  std::vector<uint8_t> reached(slots, 0);
  std::vector<uint32_t> stack{0};
  uint64_t visited = 0;
  while (!stack.empty()) {
    const uint32_t n = stack.back();
    stack.pop_back();
    if (n >= slots || reached[n]) throw fail("kd-tree node index out of range or shared");
    reached[n] = 1;
    if (++visited > slots) throw fail("kd-tree has a cycle");
    const uint32_t w0 = nodes[2 * n], w1 = nodes[2 * n + 1];
    if (kd_node_kind(w0) == TS_KD_LEAF) {
      const uint64_t count = kd_leaf_count(w0);
      if (count == 1 && out_of_range(w1)) throw fail("kd-tree leaf triangle out of range");
      if (count > 1) {
        if (!range_within(w1, count, refs.size())) throw fail("kd-tree leaf references out of range");
        for (uint64_t i = 0; i < count; ++i)
          if (out_of_range(refs[w1 + i])) throw fail("kd-tree leaf triangle out of range");
      }
      continue;
    }
    const uint32_t ref_count = kd_inner_ref_count(w0);
    if (ref_count > 2) throw fail("kd-tree node holds too many references");
    if (ref_count) {
      if (n + 1 >= slots) throw fail("kd-tree reference slot out of range");
      reached[n + 1] = 1;
      const uint32_t r0 = nodes[2 * (n + 1)], r1 = nodes[2 * (n + 1) + 1];
      if (out_of_range(r0) || (ref_count == 2 ? out_of_range(r1) : r1 != TS_KD_NO_TRIANGLE)) throw fail("kd-tree node reference out of range");
    }
    const uint32_t below = kd_dfs_below_child(n, w0), above = kd_dfs_above_child(w0);
    if (above <= n || below <= n || above >= slots || below >= slots) throw fail("kd-tree child index out of order");
    stack.push_back(above);
    stack.push_back(below);
  }
}

// The compact profile's vertices: each one's absolute quantized coordinates (scene_pack_absolute_vertex)
// where every cell fits their bits; else empty, and wide set (the .tpk's vertices and cell table).
std::vector<uint32_t> make_compact_vertices(std::span<const uint32_t> words, std::span<const uint32_t> cells, bool linear,
                                            bool& wide) {
  wide = false;
  for (size_t c = 0; c < cells.size() / 2; ++c)
    if ((cells[2 * c] & 0xFFFFu) > TS_ABSOLUTE_MAX_CELL_IJ || (cells[2 * c] >> 16) > TS_ABSOLUTE_MAX_CELL_IJ ||
        (cells[2 * c + 1] & 0xFFFFu) > TS_ABSOLUTE_MAX_CELL_K)
      wide = true;
  if (wide) return {};
  std::vector<uint32_t> out(words.size());
  for (size_t v = 0; v < words.size() / 2; ++v) {
    const uint32_t offsets = words[2 * v], cell = words[2 * v + 1] & 0xFFFFu;
    const uint32_t i = cells[2 * cell] & 0xFFFFu, j = cells[2 * cell] >> 16, k = cells[2 * cell + 1] & 0xFFFFu;
    const uint2 w = scene_pack_absolute_vertex(scene_absolute_coordinate(i, offsets & 1023u, linear),
                                               scene_absolute_coordinate(j, (offsets >> 10) & 1023u, linear),
                                               scene_absolute_coordinate(k, (offsets >> 20) & 1023u, linear));
    out[2 * v] = w.x;
    out[2 * v + 1] = w.y;
  }
  return out;
}

}  // namespace

PackedScene PackedScene::load(const std::filesystem::path& path) {
  return from_contents(read_tpk(path), path.string());
}

PackedScene PackedScene::from_contents(TpkContents contents, const std::string& name) {
  PackedScene scene;
  scene.manifest_ = std::move(contents.manifest);
  scene.sections_ = std::move(contents.sections);
  scene.content_hash_ = contents.content_hash;
  const auto& q = scene.manifest_.quantization();
  if (q.normals()) {
    if (q.normal_table() != kNormalTableName || q.normal_table_size() != kNormalTableSize)
      throw Error(name + ": unknown normal table '" + q.normal_table() + "'");
    scene.normal_table_ = normal_table_half();
  }
  scene.validate(name);
  return scene;
}

std::span<const uint8_t> PackedScene::section(tpk::SectionKind kind) const {
  for (const auto& s : sections_)
    if (s.kind == kind) return s.raw;
  return {};
}

uint32_t PackedScene::material_of(uint32_t triangle) const {
  const auto runs = section_as<uint32_t>(tpk::MATERIAL_RUNS);
  // Runs are (first triangle, material) pairs sorted by first triangle.
  size_t lo = 0, hi = runs.size() / 2;
  while (hi - lo > 1) {
    const size_t mid = (lo + hi) / 2;
    (runs[2 * mid] <= triangle ? lo : hi) = mid;
  }
  return runs[2 * lo + 1];
}

void PackedScene::validate(const std::string& name) {
  auto fail = [&](const std::string& what) -> Error { return Error(name + ": invalid scene: " + what); };
  const uint64_t nt = manifest_.triangles(), nv = manifest_.vertices();
  const auto& q = manifest_.quantization();
  // Which sections, and how large: the rules parse_tpk applied to the declared sizes.
  std::vector<SectionSize> sizes;
  for (const auto& s : sections_) sizes.push_back({int(s.kind), s.raw.size()});
  check_sections(manifest_, sizes, name);
  if (q.positions()) {
    if (!(q.cell_size() > 0.0f) || !std::isfinite(q.cell_size())) throw fail("bad cell size");
    const auto words = section_as<uint32_t>(tpk::QUANTIZED_VERTICES);
    for (size_t v = 0; v < nv; ++v)
      if ((words[2 * v + 1] & 0xFFFFu) >= q.geometry_cells()) throw fail("vertex cell index out of range");
    if (!q.normals())
      for (size_t v = 0; v < nv; ++v)
        if (words[2 * v + 1] >> 16) throw fail("normal index without quantized normals");
  }
  if (q.normals() && !q.positions()) throw fail("quantized normals need quantized positions");
  if (q.positions()) {  // sizes and cell indices checked above
    const float anchor[3] = {q.anchor().x(), q.anchor().y(), q.anchor().z()};
    position_decoding_ = position_decoding(anchor, q.cell_size(), q.position_decode() == tpk::LINEAR);
    const auto vertices = section_as<uint32_t>(tpk::QUANTIZED_VERTICES);
    vertex_records_ = make_vertex_records(vertices, section_as<uint32_t>(tpk::CELL_TABLE),
                                          section_as<uint16_t>(tpk::TEXCOORDS_QUANTIZED), position_decoding_);
    if (q.normals()) normal_indices_ = make_normal_indices(vertices);
  }

  // Texture lookups turn u * width into an int: float texcoords must be finite and bounded so
  // that no lookup overflows (16-bit quantized ones always are).
  for (float t : section_as<float>(tpk::TEXCOORDS))
    if (!(std::fabs(t) <= kMaxTexcoord)) throw fail("texture coordinate out of range (beyond +-65536 or not a number)");

  for (uint32_t v : section_as<uint32_t>(tpk::TRIANGLES))
    if (v >= nv) throw fail("triangle vertex index out of range");
  {
    // Traversal clips rays to the manifest's box, so every vertex must lie inside it.
    const SceneView view = host_view();
    const auto& b = manifest_.bounds();
    for (uint32_t v = 0; v < nv; ++v) {
      const float3 p = scene_vertex_position(&view, v);
      if (!(p.x >= b.min().x() && p.y >= b.min().y() && p.z >= b.min().z() && p.x <= b.max().x() && p.y <= b.max().y() &&
            p.z <= b.max().z()))
        throw fail("vertex outside the scene bounds");
    }
  }

  // Materials and their runs.
  const int materials = manifest_.materials_size();
  if (materials == 0) throw fail("no materials");
  const auto runs = section_as<uint32_t>(tpk::MATERIAL_RUNS);
  if (runs.empty() || runs.size() % 2 || runs[0] != 0) throw fail("bad material runs");
  for (size_t i = 0; i < runs.size(); i += 2) {
    if (runs[i + 1] >= uint32_t(materials)) throw fail("material index out of range");
    if (runs[i] >= nt || (i > 0 && runs[i] <= runs[i - 2])) throw fail("material runs out of order");
  }
  const uint64_t texels = section(tpk::TEXELS).size() / 4;  // < 2^32 (section rules): offsets fit 32 bits
  for (const auto& m : manifest_.materials()) {
    if (m.texture() < -1 || m.texture() >= manifest_.textures_size()) throw fail("material texture index out of range");
    if (m.texcoord_integer_bits() > 15) throw fail("material texcoord format out of range");
  }
  for (const auto& t : manifest_.textures())  // sizes and mip level counts were checked by the section rules
    if (!range_within(t.texel_offset(), mip_chain_texels(t.width(), t.height(), texture_levels(t)), texels))
      throw fail("texture '" + t.name() + "' lies outside the texel data");

  // kd-trees: one an object in an instanced scene; else the first, and the compact profile's where
  // the file has one.
  if (manifest_.objects() > 0) {
    validate_objects(name);
  } else {
    validate_kd_tree(section_as<uint32_t>(tpk::KD_NODES), section_as<uint32_t>(tpk::KD_LEAF_REFS), nt, fail);
    kd_nodes_ = make_compact_kd_nodes(section_as<uint32_t>(tpk::KD_NODES), section_as<uint32_t>(tpk::KD_LEAF_REFS));
  }
  if (has_compact_tree()) {
    const auto nodes = section_as<uint32_t>(tpk::KD_NODES_COMPACT);
    const auto refs = section_as<uint32_t>(tpk::KD_LEAF_REFS_COMPACT);
    validate_kd_tree(nodes, refs, nt, [&](const std::string& what) { return fail("compact " + what); });
    // narrow lists where they fit (a leaf of over 16,383 triangles keeps the file's 32-bit lists)
    compact_narrow_lists_ = narrow_leaf_lists_fit(nodes, refs);
    compact_kd_nodes_ = make_compact_kd_nodes(nodes, refs, compact_narrow_lists_);
  } else if (!section(tpk::KD_LEAF_REFS_COMPACT).empty()) {
    throw fail("compact kd-tree leaf references without its nodes");
  }
  if (q.positions())
    compact_vertices_ = make_compact_vertices(section_as<uint32_t>(tpk::QUANTIZED_VERTICES),
                                              section_as<uint32_t>(tpk::CELL_TABLE), position_decoding_.linear,
                                              compact_cells_wide_);
}

void PackedScene::validate_objects(const std::string& name) {
  auto fail = [&](const std::string& what) -> Error { return Error(name + ": invalid scene: " + what); };
  const auto words = section_as<uint32_t>(tpk::SCENE_OBJECTS);  // 6 words an object (section rules)
  const auto nodes = section_as<uint32_t>(tpk::KD_NODES);
  const auto refs = section_as<uint32_t>(tpk::KD_LEAF_REFS);
  const SceneView view = host_view();  // vertices only: the boxes below
  uint64_t slot = 0, ref = 0, triangle = 0;
  for (uint32_t o = 0; o < manifest_.objects(); ++o) {
    const uint32_t* w = &words[6 * size_t(o)];
    const std::string label = "object " + std::to_string(o) + ": ";
    if (w[0] != slot || w[2] != ref || w[4] != triangle || w[1] == 0 || w[5] == 0)
      throw fail(label + "its ranges do not follow the previous object's");
    if (!range_within(slot, w[1], nodes.size() / 2) || !range_within(ref, w[3], refs.size()) ||
        !range_within(triangle, w[5], manifest_.triangles()))
      throw fail(label + "its ranges lie outside the scene");
    validate_kd_tree(nodes.subspan(2 * slot, 2 * size_t(w[1])), refs.subspan(ref, w[3]), triangle + w[5],
                     [&](const std::string& what) { return fail(label + what); }, triangle);
    SceneObject object;
    object.kd_node_base = uint32_t(kd_nodes_.size() / 2);
    object.kd_leaf_ref_base = uint32_t(ref);
    const std::vector<uint32_t> compact = make_compact_kd_nodes(nodes.subspan(2 * slot, 2 * size_t(w[1])), refs.subspan(ref, w[3]));
    kd_nodes_.insert(kd_nodes_.end(), compact.begin(), compact.end());
    for (uint64_t t = triangle; t < triangle + w[5]; ++t)
      for (int c = 0; c < 3; ++c) {
        const float3 p = scene_vertex_position(&view, view.triangles[3 * t + c]);
        object.bounds.extend({p.x, p.y, p.z});
      }
    objects_.push_back(object);
    object_first_triangles_.push_back(uint32_t(triangle));
    slot += w[1];
    ref += w[3];
    triangle += w[5];
  }
  if (slot != nodes.size() / 2 || ref != refs.size() || triangle != manifest_.triangles())
    throw fail("the objects do not cover the scene's kd-trees and triangles");
  const auto placed = section_as<uint32_t>(tpk::SCENE_INSTANCES);
  try {
    scene_nodes_ = anim::decode_animations(section(tpk::SCENE_NODES));
  } catch (const Error& e) {
    throw fail(std::string("node hierarchy: ") + e.what());
  }
  for (size_t i = 0; i < placed.size() / 2; ++i) instance_sources_.push_back({placed[2 * i], placed[2 * i + 1]});
  // node and object indices, depth and every instance's transform at time 0 ("<name>: instance N: ...")
  SceneMotion(scene_nodes_, instance_sources_, std::vector<Aabb>(objects_.size()), name);
}

bool PackedScene::traverses_compact_tree(SceneMemory memory) const {
  // TESSERA_SCENE_MEMORY_TREE=fast|compact gives both profiles that profile's tree, to measure a
  // profile's vertices and its tree apart (docs/scene-memory.md).
  static const std::optional<SceneMemory> tree_override = [] {
    const char* value = std::getenv("TESSERA_SCENE_MEMORY_TREE");
    return value ? parse_scene_memory(value) : std::nullopt;
  }();
  return tree_override.value_or(memory) == SceneMemory::compact && has_compact_tree();
}

std::span<const uint32_t> PackedScene::compact_vertices() const {
  if (compact_cells_wide_) return section_as<uint32_t>(tpk::QUANTIZED_VERTICES);
  return compact_vertices_;
}

std::span<const uint32_t> PackedScene::kd_file_nodes(SceneMemory memory) const {
  return section_as<uint32_t>(traverses_compact_tree(memory) ? tpk::KD_NODES_COMPACT : tpk::KD_NODES);
}

std::span<const uint32_t> PackedScene::kd_file_leaf_refs(SceneMemory memory) const {
  return section_as<uint32_t>(traverses_compact_tree(memory) ? tpk::KD_LEAF_REFS_COMPACT : tpk::KD_LEAF_REFS);
}

const std::vector<uint32_t>& PackedScene::kd_nodes(SceneMemory memory) const {
  return traverses_compact_tree(memory) ? compact_kd_nodes_ : kd_nodes_;
}

SceneView PackedScene::host_view(SceneMemory memory) const {
  SceneView v{};
  const auto& q = manifest_.quantization();
  const bool cell_vertices = memory == SceneMemory::compact && q.positions();
  v.triangle_count = triangle_count();
  v.triangles = section_as<uint32_t>(tpk::TRIANGLES).data();
  if (traverses_compact_tree(memory) && compact_narrow_lists_) v.flags |= TS_SCENE_NARROW_LEAF_LISTS;
  if (instanced()) v.flags |= TS_SCENE_INSTANCED;  // the top level is the renderer's (SceneMotion)
  if (cell_vertices) {
    v.flags |= TS_SCENE_POSITIONS_QUANTIZED | TS_SCENE_CELL_VERTICES | (compact_cells_wide_ ? TS_SCENE_WIDE_CELLS : 0u);
    v.quantized_vertices = compact_vertices().data();
    if (compact_cells_wide_) v.cells = section_as<uint32_t>(tpk::CELL_TABLE).data();
    if (position_decoding_.linear) v.flags |= TS_SCENE_LINEAR_POSITIONS;
    v.anchor_x = position_decoding_.anchor[0];
    v.anchor_y = position_decoding_.anchor[1];
    v.anchor_z = position_decoding_.anchor[2];
    v.cell_size = position_decoding_.cell_size;
    v.position_step = position_decoding_.step;
  } else if (q.positions()) {
    v.flags |= TS_SCENE_POSITIONS_QUANTIZED;
    v.vertex_records = vertex_records_.data();
  } else {
    v.positions = section_as<float>(tpk::POSITIONS).data();
  }
  if (q.normals()) {
    v.flags |= TS_SCENE_HAS_NORMALS | TS_SCENE_NORMALS_QUANTIZED;
    v.normal_indices = normal_indices_.data();
    v.normal_table = normal_table_.data();
  } else if (!section(tpk::NORMALS).empty()) {
    v.flags |= TS_SCENE_HAS_NORMALS;
    v.normals = section_as<float>(tpk::NORMALS).data();
  }
  if (!section(tpk::TEXCOORDS_QUANTIZED).empty()) {
    v.flags |= TS_SCENE_HAS_TEXCOORDS | TS_SCENE_TEXCOORDS_QUANTIZED;
    v.texcoords_q = section_as<uint16_t>(tpk::TEXCOORDS_QUANTIZED).data();
  } else if (!section(tpk::TEXCOORDS).empty()) {
    v.flags |= TS_SCENE_HAS_TEXCOORDS;
    v.texcoords = section_as<float>(tpk::TEXCOORDS).data();
  }
  v.kd_nodes = kd_nodes(memory).data();
  v.kd_leaf_refs = kd_file_leaf_refs(memory).data();
  const auto& b = manifest_.bounds();
  v.bounds_min_x = b.min().x();
  v.bounds_min_y = b.min().y();
  v.bounds_min_z = b.min().z();
  v.bounds_max_x = b.max().x();
  v.bounds_max_y = b.max().y();
  v.bounds_max_z = b.max().z();
  return v;
}

}  // namespace tessera
