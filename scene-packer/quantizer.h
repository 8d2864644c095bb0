#pragma once
// Vertex quantization of Seo et al. 2022 §3.1, attribute by attribute (the combinations of their
// Table 4), plus the mesh clean-up that must follow it: triangles that quantization collapses
// are dropped, unused vertices removed, and triangles grouped by material.
#include <cstdint>
#include <vector>

#include "common/scene/triangle_mesh.h"
#include "tpk.pb.h"

namespace tessera::pack {

struct QuantizeOptions {
  bool positions = true;
  bool normals = true;
  bool texcoords = true;
  // Positions decode linearly (tpk::LINEAR, format version 6); false writes the decode of the files
  // before (CELL_PLUS_OFFSET, a version 4 or 5 file), for tests that such files still load and agree.
  bool linear_positions = true;
};

struct QuantizedMesh {
  // Device buffers, exactly as they go into .tpk sections (empty when unused).
  std::vector<uint32_t> triangles;
  std::vector<float> positions;           // float positions (positions not quantized)
  std::vector<uint32_t> position_offsets; // 10:10:10
  std::vector<uint16_t> position_cells;
  std::vector<uint16_t> cell_table;       // i, j, k per geometry cell
  std::vector<float> normals;
  std::vector<uint16_t> normal_indices;
  std::vector<float> texcoords;
  std::vector<uint16_t> texcoords_quantized;
  std::vector<uint32_t> material_runs;    // first triangle, material index
  // The first triangle of each object where the mesh has objects (TriangleMesh::object_first_triangles):
  // an object's triangles stay together, grouped by material within it.
  std::vector<uint32_t> object_first_triangles;

  // What the kernels will decode, xyz per vertex: the kd-tree is built over these.
  std::vector<float> decoded_positions;
  size_t vertex_count = 0;
  size_t triangle_count() const { return triangles.size() / 3; }

  tpk::Quantization quantization;      // parameters for the manifest
  uint64_t degenerate_triangles_dropped = 0;
  // Integer bits of each material's fixed-point texcoords (1 = the paper's 1.15 format); empty
  // when texcoords are not quantized.
  std::vector<uint8_t> material_texcoord_integer_bits;
  uint64_t texcoord_triangles_clamped = 0;  // uv span too wide even for the widest format
  double position_precision = 0.0;          // quantization step / longest box side
  double max_position_error = 0.0;          // measured, in scene units
};

QuantizedMesh quantize_mesh(const TriangleMesh& mesh, const QuantizeOptions& options);

}  // namespace tessera::pack
