#pragma once
// The layout quantized vertices take in device (and host render) memory: one 16-byte record a
// vertex that holds what a ray reads of it, and what shading reads besides
// (kernels/scene/scene_view.h):
//   word0-2  the position, decoded once here (decode_quantized_position): float bits of x, y, z
//   word3    quantized texture coordinate u | v << 16 (0 without quantized texture coordinates)
// and beside the records one 16-bit normal-table index a vertex (normal_indices).
// The .tpk keeps the smaller split form (QUANTIZED_VERTICES, CELL_TABLE, TEXCOORDS_QUANTIZED),
// which compresses better. A triangle test then reads each vertex with one aligned load and
// decodes nothing: decoding cells and offsets in the test cost the H100 14-16 % of its rays.
#include <cstdint>
#include <span>
#include <vector>

namespace tessera {

constexpr uint64_t kVertexRecordBytes = 16;
constexpr uint64_t kNormalIndexBytes = 2;

// How the .tpk's quantized positions decode (its Quantization message): today's files linearly
// (Quantization.position_decode LINEAR, format version 6: fma(cell * 1023 + offset, step, anchor)),
// older ones as anchor + (cell + offset / 1023) * cell_size. Make it with position_decoding so that
// step is the one float every decode site (and every backend, through SceneView.position_step) uses.
struct PositionDecoding {
  float anchor[3];
  float cell_size;
  float step;   // cell_size / 1023
  bool linear;
};
PositionDecoding position_decoding(const float anchor[3], float cell_size, bool linear);

// vertices: 2 words a vertex (offsets; cell index | normal index << 16), cells: 2 words a cell
// (i | j << 16; k), texcoords: 2 halves a vertex or empty. Cell indices must be in range.
std::vector<uint32_t> make_vertex_records(std::span<const uint32_t> vertices, std::span<const uint32_t> cells,
                                          std::span<const uint16_t> texcoords, const PositionDecoding& decoding);

// The normal-table index of every vertex (the high half of its second word).
std::vector<uint16_t> make_normal_indices(std::span<const uint32_t> vertices);

}  // namespace tessera
