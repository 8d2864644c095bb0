#pragma once
// The layout quantized vertices take in device (and host render) memory: one 16-byte record a
// vertex that holds everything a ray or a shading point reads of it (kernels/scene/scene_view.h):
//   word0  position offsets x | y << 10 | z << 20 inside the geometry cell
//   word1  the cell's coordinates i | j << 16
//   word2  the cell's coordinate k | normal-table index << 16
//   word3  quantized texture coordinate u | v << 16 (0 without quantized texture coordinates)
// The .tpk keeps the smaller split form (QUANTIZED_VERTICES, CELL_TABLE, TEXCOORDS_QUANTIZED),
// which compresses better; records are built from it at load time. A triangle test then reads
// each vertex with one aligned load instead of a vertex load followed by a dependent cell load.
#include <cstdint>
#include <span>
#include <vector>

namespace tessera {

constexpr uint64_t kVertexRecordBytes = 16;

// vertices: 2 words a vertex (offsets; cell index | normal index << 16), cells: 2 words a cell
// (i | j << 16; k), texcoords: 2 halves a vertex or empty. Cell indices must be in range.
std::vector<uint32_t> make_vertex_records(std::span<const uint32_t> vertices, std::span<const uint32_t> cells,
                                          std::span<const uint16_t> texcoords);

}  // namespace tessera
