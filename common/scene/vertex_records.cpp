#include "common/scene/vertex_records.h"

#include <bit>

#include "kernels/scene/scene_view.h"

namespace tessera {

PositionDecoding position_decoding(const float anchor[3], float cell_size, bool linear) {
  return {{anchor[0], anchor[1], anchor[2]}, cell_size, cell_size / TS_POSITION_OFFSET_LEVELS, linear};
}

std::vector<uint32_t> make_vertex_records(std::span<const uint32_t> vertices, std::span<const uint32_t> cells,
                                          std::span<const uint16_t> texcoords, const PositionDecoding& decoding) {
  const size_t count = vertices.size() / 2;
  std::vector<uint32_t> records(4 * count);
  for (size_t v = 0; v < count; ++v) {
    const uint32_t cell = vertices[2 * v + 1] & 0xFFFFu;
    const float3 p = decode_quantized_position(vertices[2 * v], cells[2 * cell], cells[2 * cell + 1] & 0xFFFFu,
                                               decoding.anchor[0], decoding.anchor[1], decoding.anchor[2],
                                               decoding.cell_size, decoding.step, decoding.linear ? 1u : 0u);
    records[4 * v] = std::bit_cast<uint32_t>(p.x);
    records[4 * v + 1] = std::bit_cast<uint32_t>(p.y);
    records[4 * v + 2] = std::bit_cast<uint32_t>(p.z);
    records[4 * v + 3] = texcoords.empty() ? 0u : uint32_t(texcoords[2 * v]) | uint32_t(texcoords[2 * v + 1]) << 16;
  }
  return records;
}

std::vector<uint16_t> make_normal_indices(std::span<const uint32_t> vertices) {
  std::vector<uint16_t> indices(vertices.size() / 2);
  for (size_t v = 0; v < indices.size(); ++v) indices[v] = uint16_t(vertices[2 * v + 1] >> 16);
  return indices;
}

}  // namespace tessera
