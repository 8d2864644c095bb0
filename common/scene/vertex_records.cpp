#include "common/scene/vertex_records.h"

namespace tessera {

std::vector<uint32_t> make_vertex_records(std::span<const uint32_t> vertices, std::span<const uint32_t> cells,
                                          std::span<const uint16_t> texcoords) {
  const size_t count = vertices.size() / 2;
  std::vector<uint32_t> records(4 * count);
  for (size_t v = 0; v < count; ++v) {
    const uint32_t cell = vertices[2 * v + 1] & 0xFFFFu, normal = vertices[2 * v + 1] >> 16;
    records[4 * v] = vertices[2 * v];
    records[4 * v + 1] = cells[2 * cell];
    records[4 * v + 2] = (cells[2 * cell + 1] & 0xFFFFu) | normal << 16;
    records[4 * v + 3] = texcoords.empty() ? 0u : uint32_t(texcoords[2 * v]) | uint32_t(texcoords[2 * v + 1]) << 16;
  }
  return records;
}

}  // namespace tessera
