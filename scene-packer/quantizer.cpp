#include "scene-packer/quantizer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "common/base/error.h"
#include "common/scene/aabb.h"
#include "common/scene/normal_table.h"
#include "common/scene/vertex_records.h"
#include "kernels/scene/scene_view.h"
#include "scene-packer/triangle_order.h"

namespace tessera::pack {
namespace {

constexpr uint32_t kMaxGeometryCells = 65536;
constexpr uint32_t kMaxGridResolution = 65535;  // cell coordinates are 16-bit
constexpr uint8_t kMaxTexcoordIntegerBits = 8;   // keeps at least 8 fraction bits

struct CellGrid {
  double anchor[3];
  double cell_size;
  uint32_t resolution[3];
};

// Bounding box enlarged slightly so no vertex sits on its far faces.
Aabb enlarged_bounds(const std::vector<float>& positions) {
  Aabb box;
  for (size_t v = 0; v < positions.size() / 3; ++v)
    box.extend({positions[3 * v], positions[3 * v + 1], positions[3 * v + 2]});
  const float margin = std::max(box.extent(box.longest_axis()) * 1e-4f, 1e-6f);
  for (int a = 0; a < 3; ++a) {
    box.min[a] -= margin;
    box.max[a] += margin;
  }
  return box;
}

CellGrid make_grid(const Aabb& box, uint32_t subdivisions) {
  CellGrid grid{};
  grid.cell_size = double(box.extent(box.longest_axis())) / subdivisions;
  for (int a = 0; a < 3; ++a) {
    grid.anchor[a] = box.min[a];
    grid.resolution[a] = std::max<uint32_t>(1, static_cast<uint32_t>(std::ceil(box.extent(a) / grid.cell_size)));
  }
  return grid;
}

uint32_t cell_coordinate(const CellGrid& grid, int axis, float p) {
  const double c = std::floor((double(p) - grid.anchor[axis]) / grid.cell_size);
  return static_cast<uint32_t>(std::clamp(c, 0.0, double(grid.resolution[axis] - 1)));
}

uint64_t cell_key(const CellGrid& grid, const float* p) {
  return (uint64_t(cell_coordinate(grid, 0, p[0])) << 32) | (uint64_t(cell_coordinate(grid, 1, p[1])) << 16) |
         cell_coordinate(grid, 2, p[2]);
}

// Sorted distinct cells that hold a vertex. Only those cells need an index: every vertex is
// coded relative to the cell it lies in, which lets the grid be finer than one built from all
// cells the triangles cross.
std::vector<uint64_t> occupied_cells(const CellGrid& grid, const std::vector<float>& positions) {
  std::vector<uint64_t> keys(positions.size() / 3);
  for (size_t v = 0; v < keys.size(); ++v) keys[v] = cell_key(grid, &positions[3 * v]);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

// Whether at most `limit` distinct cells hold a vertex. The bisection below only needs this
// answer, so it counts in a small hash set and stops once the limit is passed instead of
// sorting every vertex's key per probe.
bool occupied_cells_fit(const CellGrid& grid, const std::vector<float>& positions, size_t limit) {
  constexpr uint64_t kEmpty = UINT64_MAX;  // no key has all 64 bits set (coordinates < 65535)
  const size_t capacity = std::bit_ceil(2 * limit + 2);  // load factor stays below 1/2
  const int shift = 64 - std::countr_zero(capacity);
  std::vector<uint64_t> slots(capacity, kEmpty);
  size_t distinct = 0;
  for (size_t v = 0; v < positions.size() / 3; ++v) {
    const uint64_t key = cell_key(grid, &positions[3 * v]);
    size_t i = size_t((key * 0x9E3779B97F4A7C15ull) >> shift);
    while (slots[i] != kEmpty && slots[i] != key) i = (i + 1) & (capacity - 1);
    if (slots[i] == kEmpty) {
      slots[i] = key;
      if (++distinct > limit) return false;
    }
  }
  return true;
}

// The finest subdivision of the longest box side (found by bisection, as in the paper) whose
// occupied cells fit a 16-bit index.
CellGrid choose_grid(const Aabb& box, const std::vector<float>& positions) {
  uint32_t lo = 1, hi = kMaxGridResolution;
  auto fits = [&](uint32_t n) {
    const CellGrid g = make_grid(box, n);
    for (uint32_t r : g.resolution)
      if (r > kMaxGridResolution) return false;
    return occupied_cells_fit(g, positions, kMaxGeometryCells);
  };
  if (fits(hi)) return make_grid(box, hi);
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return make_grid(box, lo);
}

// Normals in the table's 16-bit index. Vertices split by texcoords or copied by --replicate
// repeat the same normal, so each distinct vector is searched for once.
class CachedNormalEncoder {
 public:
  uint16_t encode(const float* n) {
    const Key key{std::bit_cast<uint32_t>(n[0]), std::bit_cast<uint32_t>(n[1]), std::bit_cast<uint32_t>(n[2])};
    auto [it, inserted] = cache_.try_emplace(key, 0);
    if (inserted) it->second = encoder().encode({n[0], n[1], n[2]});
    return it->second;
  }

 private:
  struct Key {
    uint32_t x, y, z;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return size_t(((uint64_t(k.x) * 0x9E3779B97F4A7C15ull) ^ k.y) * 0xC2B2AE3D27D4EB4Full ^ k.z);
    }
  };
  static const NormalEncoder& encoder() {
    static const NormalEncoder shared;
    return shared;
  }
  std::unordered_map<Key, uint16_t, KeyHash> cache_;
};

// Texture coordinates in 16 bits: each triangle's are shifted by whole numbers so they start in
// [0, 1) (textures repeat, so the shift is invisible), then stored as fixed point with b integer
// bits. Seo et al. use b = 1 everywhere; a material whose texture repeats many times across one
// triangle (Sponza's floor spans 15 repeats) needs more, so b is chosen per material — the
// smallest that holds all of its triangles — and vertices shared across shifts or materials are
// split. Returns each vertex's b.
std::vector<uint8_t> prepare_texcoords(TriangleMesh& mesh, std::vector<uint8_t>& material_bits, uint64_t& clamped) {
  const size_t nt = mesh.triangle_count();
  std::vector<float> shift(2 * nt);
  material_bits.assign(mesh.materials.size(), 1);
  for (size_t t = 0; t < nt; ++t) {
    float lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (int c = 0; c < 3; ++c)
      for (int a = 0; a < 2; ++a) {
        const float x = mesh.texcoords[2 * mesh.triangles[3 * t + c] + a];
        lo[a] = std::min(lo[a], x);
        hi[a] = std::max(hi[a], x);
      }
    uint8_t bits = 1;
    for (int a = 0; a < 2; ++a) {
      shift[2 * t + a] = std::floor(lo[a]);
      while (bits < kMaxTexcoordIntegerBits && hi[a] - shift[2 * t + a] >= float(1u << bits)) ++bits;
      if (hi[a] - shift[2 * t + a] >= float(1u << bits)) ++clamped;
    }
    uint8_t& m = material_bits[mesh.triangle_materials[t]];
    m = std::max(m, bits);
  }
  const std::vector<float> original = mesh.texcoords;
  std::vector<uint8_t> vertex_bits(mesh.vertex_count(), 0);
  std::vector<uint64_t> owner(mesh.vertex_count(), UINT64_MAX);  // key that keeps the original slot
  std::unordered_map<uint64_t, uint32_t> split;                   // (vertex, shift, bits) -> vertex
  for (size_t t = 0; t < nt; ++t) {
    const uint8_t bits = material_bits[mesh.triangle_materials[t]];
    const int64_t su = int64_t(shift[2 * t]), sv = int64_t(shift[2 * t + 1]);
    for (int c = 0; c < 3; ++c) {
      uint32_t& v = mesh.triangles[3 * t + c];
      const uint32_t src = v;
      const uint64_t key = (uint64_t(src) << 32) ^ (uint64_t(su & 0x3FFF) << 18) ^ (uint64_t(sv & 0x3FFF) << 4) ^ bits;
      if (owner[src] == UINT64_MAX) owner[src] = key;
      uint32_t target = src;
      if (owner[src] != key) {
        auto [it, inserted] = split.try_emplace(key, uint32_t(mesh.vertex_count()));
        target = it->second;
        if (inserted) {
          for (int a = 0; a < 3; ++a) mesh.positions.push_back(mesh.positions[3 * src + a]);
          if (mesh.has_normals())
            for (int a = 0; a < 3; ++a) mesh.normals.push_back(mesh.normals[3 * src + a]);
          mesh.texcoords.push_back(0.0f);
          mesh.texcoords.push_back(0.0f);
          vertex_bits.push_back(0);
        }
      }
      mesh.texcoords[2 * target] = original[2 * src] - float(su);
      mesh.texcoords[2 * target + 1] = original[2 * src + 1] - float(sv);
      vertex_bits[target] = bits;
      v = target;
    }
  }
  return vertex_bits;
}

uint16_t quantize_texcoord(float x, uint8_t integer_bits) {
  const double scale = double(1u << (16 - integer_bits));
  return static_cast<uint16_t>(std::clamp<double>(std::lround(double(x) * scale), 0.0, 65535.0));
}

}  // namespace

QuantizedMesh quantize_mesh(const TriangleMesh& input, const QuantizeOptions& options) {
  if (input.triangle_count() == 0) throw Error("the scene has no triangles");
  TriangleMesh mesh = input;
  QuantizedMesh out;
  const bool quantize_tex = options.texcoords && mesh.has_texcoords();
  std::vector<uint8_t> vertex_texcoord_bits;
  if (quantize_tex)
    vertex_texcoord_bits = prepare_texcoords(mesh, out.material_texcoord_integer_bits, out.texcoord_triangles_clamped);

  // ---- positions ----
  const size_t nv = mesh.vertex_count();
  std::vector<float> decoded(mesh.positions);
  std::vector<uint32_t> offsets, cells_of_vertex;
  std::vector<uint64_t> cells;
  CellGrid grid{};
  if (options.positions) {
    const Aabb box = enlarged_bounds(mesh.positions);
    grid = choose_grid(box, mesh.positions);
    cells = occupied_cells(grid, mesh.positions);
    offsets.resize(nv);
    cells_of_vertex.resize(nv);
    const float anchor[3] = {float(grid.anchor[0]), float(grid.anchor[1]), float(grid.anchor[2])};
    const float cell_size = float(grid.cell_size);
    const PositionDecoding decoding = position_decoding(anchor, cell_size, options.linear_positions);
    // The decoder works on the float anchor and cell size, so the encoder does too.
    std::vector<uint16_t> table(3 * cells.size());
    for (size_t c = 0; c < cells.size(); ++c) {
      table[3 * c] = uint16_t(cells[c] >> 32);
      table[3 * c + 1] = uint16_t(cells[c] >> 16);
      table[3 * c + 2] = uint16_t(cells[c]);
    }
    for (size_t v = 0; v < nv; ++v) {
      const float* p = &mesh.positions[3 * v];
      const uint64_t key = cell_key(grid, p);
      const uint32_t cell = static_cast<uint32_t>(std::lower_bound(cells.begin(), cells.end(), key) - cells.begin());
      uint32_t packed = 0;
      for (int a = 0; a < 3; ++a) {
        const double cell_min = double(anchor[a]) + double(table[3 * cell + a]) * cell_size;
        const double f = (double(p[a]) - cell_min) / cell_size * TS_POSITION_OFFSET_LEVELS;
        packed |= uint32_t(std::clamp<long>(std::lround(f), 0, 1023)) << (10 * a);
      }
      offsets[v] = packed;
      cells_of_vertex[v] = cell;
      const float3 q = decode_quantized_position(packed, uint32_t(table[3 * cell]) | uint32_t(table[3 * cell + 1]) << 16,
                                                 table[3 * cell + 2], anchor[0], anchor[1], anchor[2], cell_size,
                                                 decoding.step, decoding.linear ? 1u : 0u);
      decoded[3 * v] = q.x;
      decoded[3 * v + 1] = q.y;
      decoded[3 * v + 2] = q.z;
      for (int a = 0; a < 3; ++a) out.max_position_error = std::max(out.max_position_error, std::fabs(double(decoded[3 * v + a]) - p[a]));
    }
    out.cell_table = std::move(table);
    auto& q = out.quantization;
    q.mutable_anchor()->set_x(anchor[0]);
    q.mutable_anchor()->set_y(anchor[1]);
    q.mutable_anchor()->set_z(anchor[2]);
    q.set_cell_size(cell_size);
    q.set_position_decode(options.linear_positions ? tpk::LINEAR : tpk::CELL_PLUS_OFFSET);
    q.set_grid_x(grid.resolution[0]);
    q.set_grid_y(grid.resolution[1]);
    q.set_grid_z(grid.resolution[2]);
    q.set_geometry_cells(static_cast<uint32_t>(cells.size()));
    out.position_precision = (grid.cell_size / TS_POSITION_OFFSET_LEVELS) / box.extent(box.longest_axis());
  }
  out.quantization.set_positions(options.positions);
  out.quantization.set_normals(options.normals && mesh.has_normals());
  out.quantization.set_texcoords(quantize_tex);

  // ---- drop triangles that are degenerate in the decoded geometry ----
  std::vector<uint32_t> kept;
  kept.reserve(mesh.triangle_count());
  for (uint32_t t = 0; t < mesh.triangle_count(); ++t) {
    const uint32_t* tri = &mesh.triangles[3 * t];
    bool degenerate = tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2];
    if (!degenerate) {
      float3 p[3];
      for (int c = 0; c < 3; ++c) p[c] = make_float3(decoded[3 * tri[c]], decoded[3 * tri[c] + 1], decoded[3 * tri[c] + 2]);
      const float3 n = v3_cross(v3_sub(p[1], p[0]), v3_sub(p[2], p[0]));
      degenerate = n.x == 0.0f && n.y == 0.0f && n.z == 0.0f;
    }
    if (degenerate)
      ++out.degenerate_triangles_dropped;
    else
      kept.push_back(t);
  }
  if (kept.empty()) throw Error("every triangle of the scene is degenerate");
  // Objects apart, each its own run of triangles grouped by material, and within a group nearby
  // triangles numbered close together (scene-packer/triangle_order.h).
  std::vector<uint32_t> object_of;  // empty without objects
  if (!mesh.object_first_triangles.empty()) {
    object_of.resize(mesh.triangle_count());
    for (size_t o = 0; o < mesh.object_first_triangles.size(); ++o) {
      const size_t end = o + 1 < mesh.object_first_triangles.size() ? mesh.object_first_triangles[o + 1] : mesh.triangle_count();
      std::fill(object_of.begin() + mesh.object_first_triangles[o], object_of.begin() + long(end), uint32_t(o));
    }
  }
  order_triangles(mesh, object_of, kept);
  if (!object_of.empty()) {
    out.object_first_triangles.assign(mesh.object_first_triangles.size(), 0);
    std::vector<uint32_t> kept_of(mesh.object_first_triangles.size(), 0);
    for (uint32_t t : kept) ++kept_of[object_of[t]];
    for (size_t o = 0, first = 0; o < kept_of.size(); first += kept_of[o], ++o) {
      if (kept_of[o] == 0) throw Error("object " + std::to_string(o) + ": every triangle is degenerate");
      out.object_first_triangles[o] = uint32_t(first);
    }
  }

  // ---- renumber vertices in first-use order, dropping unused ones ----
  std::vector<uint32_t> new_index(nv, UINT32_MAX);
  std::vector<uint32_t> order;
  order.reserve(nv);
  out.triangles.reserve(3 * kept.size());
  for (uint32_t t : kept) {
    for (int c = 0; c < 3; ++c) {
      const uint32_t v = mesh.triangles[3 * t + c];
      if (new_index[v] == UINT32_MAX) {
        new_index[v] = static_cast<uint32_t>(order.size());
        order.push_back(v);
      }
      out.triangles.push_back(new_index[v]);
    }
  }
  for (size_t i = 0; i < kept.size(); ++i) {
    const uint32_t material = mesh.triangle_materials[kept[i]];
    const bool new_object = !object_of.empty() && i > 0 && object_of[kept[i]] != object_of[kept[i - 1]];
    if (i == 0 || material != mesh.triangle_materials[kept[i - 1]] || new_object) {
      out.material_runs.push_back(static_cast<uint32_t>(i));
      out.material_runs.push_back(material);
    }
  }
  out.vertex_count = order.size();

  // ---- per-vertex attributes in the new order ----
  const bool encode_normals = options.normals && mesh.has_normals();
  CachedNormalEncoder encoder;
  out.decoded_positions.reserve(3 * order.size());
  for (uint32_t v : order) {
    for (int a = 0; a < 3; ++a) out.decoded_positions.push_back(decoded[3 * v + a]);
    if (options.positions) {
      out.position_offsets.push_back(offsets[v]);
      out.position_cells.push_back(static_cast<uint16_t>(cells_of_vertex[v]));
    } else {
      for (int a = 0; a < 3; ++a) out.positions.push_back(mesh.positions[3 * v + a]);
    }
    if (mesh.has_normals()) {
      if (encode_normals)
        out.normal_indices.push_back(encoder.encode(&mesh.normals[3 * v]));
      else
        for (int a = 0; a < 3; ++a) out.normals.push_back(mesh.normals[3 * v + a]);
    }
    if (mesh.has_texcoords()) {
      if (quantize_tex) {
        out.texcoords_quantized.push_back(quantize_texcoord(mesh.texcoords[2 * v], vertex_texcoord_bits[v]));
        out.texcoords_quantized.push_back(quantize_texcoord(mesh.texcoords[2 * v + 1], vertex_texcoord_bits[v]));
      } else {
        out.texcoords.push_back(mesh.texcoords[2 * v]);
        out.texcoords.push_back(mesh.texcoords[2 * v + 1]);
      }
    }
  }
  if (encode_normals) {
    out.quantization.set_normal_table(kNormalTableName);
    out.quantization.set_normal_table_size(kNormalTableSize);
  }
  return out;
}

}  // namespace tessera::pack
