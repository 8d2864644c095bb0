#include "common/render/scene_uploads.h"

#include <algorithm>

namespace tessera {
namespace {

template <typename T>
std::span<const uint8_t> as_bytes(std::span<const T> values) {
  return {reinterpret_cast<const uint8_t*>(values.data()), values.size_bytes()};
}
template <typename T>
std::span<const uint8_t> as_bytes(const std::vector<T>& values) {
  return as_bytes(std::span<const T>(values));
}

// The triangles' vertex indices in 8 bytes each (kernels/scene/scene_view.h).
std::vector<uint32_t> packed_triangle_indices(std::span<const uint32_t> indices) {
  std::vector<uint32_t> out(indices.size() / 3 * 2);
  for (size_t t = 0; t < indices.size() / 3; ++t) {
    const uint2 w = scene_pack_triangle(indices[3 * t], indices[3 * t + 1], indices[3 * t + 2]);
    out[2 * t] = w.x;
    out[2 * t + 1] = w.y;
  }
  return out;
}

// The compact profile lays its vertices out anew for 6-byte triangles where the file's order spans
// too many in a block: in the order the triangles first use them, a vertex copied again where its
// last copy lies `window` or more behind the newest, so every block of TS_TRIANGLE_BLOCK triangles
// spans fewer than window + 3 x TS_TRIANGLE_BLOCK vertices. (Vertices that triangles far apart in
// the file share, e.g. across material groups, take a few more bytes.)
void window_vertices(std::span<const uint32_t> triangles, std::span<const uint32_t> words,
                     std::span<const uint16_t> texcoords, std::span<const uint16_t> normal_indices, uint32_t window,
                     std::vector<uint32_t>& new_triangles, std::vector<uint32_t>& new_words,
                     std::vector<uint16_t>& new_texcoords, std::vector<uint16_t>& new_normal_indices) {
  constexpr uint32_t kNone = 0xFFFFFFFFu;
  std::vector<uint32_t> latest(words.size() / 2, kNone);
  new_triangles.resize(triangles.size());
  new_words.clear();
  new_texcoords.clear();
  new_normal_indices.clear();
  for (size_t i = 0; i < triangles.size(); ++i) {
    const uint32_t v = triangles[i], count = uint32_t(new_words.size() / 2);
    if (latest[v] == kNone || count - latest[v] >= window) {
      latest[v] = count;
      new_words.insert(new_words.end(), {words[2 * v], words[2 * v + 1]});
      if (!texcoords.empty()) new_texcoords.insert(new_texcoords.end(), {texcoords[2 * v], texcoords[2 * v + 1]});
      if (!normal_indices.empty()) new_normal_indices.push_back(normal_indices[v]);
    }
    new_triangles[i] = latest[v];
  }
}

}  // namespace

bool short_triangle_indices(std::span<const uint32_t> indices, std::vector<uint32_t>& words, std::vector<uint32_t>& bases) {
  const size_t triangles = indices.size() / 3;
  // triangles words, then triangles ushorts, padded to a word
  std::vector<uint32_t> out(triangles + (triangles + 1) / 2), base_of((triangles + TS_TRIANGLE_BLOCK - 1) / TS_TRIANGLE_BLOCK);
  uint16_t* third = reinterpret_cast<uint16_t*>(out.data() + triangles);
  for (size_t b = 0; b < base_of.size(); ++b) {
    const size_t first = b * TS_TRIANGLE_BLOCK, end = std::min(triangles, first + TS_TRIANGLE_BLOCK);
    const auto [lo, hi] = std::minmax_element(indices.begin() + 3 * first, indices.begin() + 3 * end);
    if (*hi - *lo > TS_SHORT_TRIANGLE_MAX_SPAN) return false;
    base_of[b] = *lo;
    for (size_t t = first; t < end; ++t) {
      out[t] = (indices[3 * t] - *lo) | ((indices[3 * t + 1] - *lo) << 16);
      third[t] = uint16_t(indices[3 * t + 2] - *lo);
    }
  }
  words = std::move(out);
  bases = std::move(base_of);
  return true;
}

SceneUploads::SceneUploads(const PackedScene& scene, const KdNodeLayout& kd_layout, SceneMemory memory) {
  const SceneView view = scene.host_view(memory);
  const bool cell_vertices = view.flags & TS_SCENE_CELL_VERTICES;
  // The node layout the kernels were built for (program.cpp adds its -D options); the .tpk holds
  // the depth-first one.
  kd_nodes = device_kd_nodes(scene.kd_file_nodes(memory), scene.kd_nodes(memory), kd_layout);
  constants = scene_constants(view);
  if (kd_layout.blocked) constants.flags &= ~TS_SCENE_NARROW_LEAF_LISTS;  // built from the .tpk's 32-bit lists
  // Triangles: 8 bytes where the scene has few enough vertices, else 12 as in the .tpk. The compact
  // profile: 6 where every block of triangles spans fewer than 2^16 vertices, in the file's order or
  // with its vertices laid out anew (window_vertices: a copy where a vertex was last used too far
  // back), where that takes fewer bytes than 8-byte triangles or these cannot index the vertices.
  const std::span<const uint32_t> file_triangles = scene.section_as<uint32_t>(tpk::TRIANGLES);
  std::span<const uint8_t> vertex_words = as_bytes(scene.compact_vertices());
  std::span<const uint8_t> texcoords_q = scene.section(tpk::TEXCOORDS_QUANTIZED);
  // the compact profile's normal index lies in its vertex words only with wide cells
  const bool wide = cell_vertices && scene.compact_cells_wide();
  std::span<const uint8_t> normal_indices = wide ? std::span<const uint8_t>() : as_bytes(scene.normal_indices());
  const bool fits_packed = scene.vertex_count() <= TS_PACKED_TRIANGLE_MAX_VERTICES;
  bool short_triangles = cell_vertices && short_triangle_indices(file_triangles, packed_triangles, triangle_bases);
  bool windowed = false;
  if (cell_vertices && !short_triangles) {
    std::vector<uint32_t> triangles;
    // a block then spans fewer than 2^15 + 3 x 64 vertices, so short_triangle_indices holds it
    window_vertices(file_triangles, scene.compact_vertices(), scene.section_as<uint16_t>(tpk::TEXCOORDS_QUANTIZED),
                    wide ? std::span<const uint16_t>() : std::span<const uint16_t>(scene.normal_indices()),
                    TS_SHORT_TRIANGLE_MAX_SPAN / 2, triangles, windowed_words, windowed_texcoords, windowed_normal_indices);
    const uint64_t copies = windowed_words.size() / 2 - scene.vertex_count();
    const uint64_t copy_bytes = 8 + (texcoords_q.empty() ? 0 : 4) + (normal_indices.empty() ? 0 : 2);
    // against 8-byte triangles with the file's vertices: 2 bytes a triangle less, copy_bytes a copy more
    if ((!fits_packed || copies * copy_bytes < 2 * uint64_t(scene.triangle_count())) &&
        short_triangle_indices(triangles, packed_triangles, triangle_bases)) {
      short_triangles = windowed = true;
      vertex_words = as_bytes(windowed_words);
      if (!texcoords_q.empty()) texcoords_q = as_bytes(windowed_texcoords);
      if (!normal_indices.empty()) normal_indices = as_bytes(windowed_normal_indices);
    } else {
      windowed_words.clear(), windowed_texcoords.clear(), windowed_normal_indices.clear();
    }
  }
  const bool small = !short_triangles && fits_packed;
  if (small) {
    packed_triangles = packed_triangle_indices(file_triangles);
    constants.flags |= TS_SCENE_PACKED_TRIANGLES;
  }
  if (short_triangles) constants.flags |= TS_SCENE_SHORT_TRIANGLES;
  const bool pack = small || short_triangles;
  const std::vector<uint16_t>& table = scene.normal_table();
  const std::span<const uint8_t> none;
  // Scene buffers in TS_SCENE_PARAMS order; absent sections become empty placeholders.
  geometry = {
      {"triangles", pack ? as_bytes(packed_triangles) : scene.section(tpk::TRIANGLES)},
      {"positions", scene.section(tpk::POSITIONS)},
      {"vertex_records", cell_vertices ? none : as_bytes(scene.vertex_records())},
      {"normals", scene.section(tpk::NORMALS)},
      {"normal_indices", normal_indices},
      {"normal_table", (view.flags & TS_SCENE_NORMALS_QUANTIZED) ? as_bytes(table) : none},
      {"texcoords", scene.section(tpk::TEXCOORDS)},
      // with quantized positions the fast profile's vertex records hold the texture coordinates
      {"texcoords_quantized",
       (view.flags & TS_SCENE_POSITIONS_QUANTIZED) && !cell_vertices ? none : texcoords_q},
      {"kd_nodes", as_bytes(kd_nodes)},
      // only the blocked layouts read leaf lists apart from the nodes
      {"kd_leaf_refs", kd_layout.blocked ? as_bytes(scene.kd_file_leaf_refs(memory)) : none},
      {"quantized_vertices", cell_vertices ? vertex_words : none},
      {"cells", wide ? scene.section(tpk::CELL_TABLE) : none},
      {"triangle_bases", as_bytes(triangle_bases)},
  };
  shading = ShadingData::build(scene);
  shade = {
      {"materials", as_bytes(shading.materials)},
      {"material_runs", as_bytes(shading.material_runs)},
      {"textures", as_bytes(shading.textures)},
      {"texels", as_bytes(shading.texels)},
      {"lights", as_bytes(shading.lights)},
      {"emitters", as_bytes(shading.emitters)},
      {"srgb_to_linear", as_bytes(shading.srgb_to_linear)},
      {"linear_to_srgb_threshold", as_bytes(shading.linear_to_srgb_threshold)},
  };
  // What traversal reads: triangles, vertices (float, records, or the compact profile's 8-byte
  // vertices and texture coordinates, with the cell table where wide), kd-tree nodes and leaf lists.
  // (Shading's normal indices are not counted, in either profile.)
  std::vector<const char*> traversal = {"triangles", "positions", "vertex_records", "kd_nodes", "kd_leaf_refs"};
  if (cell_vertices) traversal.insert(traversal.end(), {"quantized_vertices", "cells", "texcoords_quantized", "triangle_bases"});
  for (const char* name : traversal)
    for (const auto& u : geometry)
      if (u.name == name) mesh_tree_bytes += u.bytes.size();
}

std::vector<SceneUpload> SceneUploads::all() const {
  std::vector<SceneUpload> out = geometry;
  out.insert(out.end(), shade.begin(), shade.end());
  return out;
}

SceneFootprint scene_footprint(const PackedScene& scene, const KdNodeLayout& kd_layout, SceneMemory memory) {
  const SceneUploads uploads(scene, kd_layout, memory);
  SceneFootprint f;
  for (const auto& u : uploads.all()) {
    f.buffers.push_back({u.name, u.bytes.size()});
    f.device_bytes += u.bytes.size();
  }
  f.mesh_tree_bytes = uploads.mesh_tree_bytes;
  return f;
}

}  // namespace tessera
