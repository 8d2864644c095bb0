#include "common/scene/glb_container.h"

#include <cstring>

#include "common/base/error.h"

namespace tessera::gltf {
namespace {

constexpr uint32_t kMagic = 0x46546C67;      // "glTF"
constexpr uint32_t kJsonChunk = 0x4E4F534A;  // "JSON"
constexpr uint32_t kBinChunk = 0x004E4942;   // "BIN\0"

uint32_t u32(std::span<const uint8_t> bytes, uint64_t offset) {
  uint32_t v;
  std::memcpy(&v, bytes.data() + offset, 4);
  return v;  // glb is little endian, as every target of this code
}

}  // namespace

bool looks_like_glb(std::span<const uint8_t> bytes) { return bytes.size() >= 4 && u32(bytes, 0) == kMagic; }

GlbLayout check_glb(std::span<const uint8_t> bytes, const std::string& name) {
  if (bytes.size() < 20) throw Error(name + ": truncated glb (" + std::to_string(bytes.size()) + " bytes, the header needs 20)");
  if (u32(bytes, 0) != kMagic) throw Error(name + ": not a glb file (no 'glTF' magic)");
  if (u32(bytes, 4) != 2) throw Error(name + ": glb version " + std::to_string(u32(bytes, 4)) + " (only 2 is supported)");
  const uint64_t length = u32(bytes, 8);
  if (length != bytes.size())
    throw Error(name + ": truncated glb (header says " + std::to_string(length) + " bytes, the file has " +
                std::to_string(bytes.size()) + ")");
  GlbLayout layout;
  uint64_t offset = 12;
  bool first = true;
  while (offset < length) {
    if (length - offset < 8) throw Error(name + ": truncated glb chunk header at byte " + std::to_string(offset));
    const uint64_t chunk_length = u32(bytes, offset);
    const uint32_t type = u32(bytes, offset + 4);
    if (chunk_length > length - offset - 8)
      throw Error(name + ": glb chunk at byte " + std::to_string(offset) + " (" + std::to_string(chunk_length) +
                  " bytes) runs past the end of the file");
    if (first) {
      if (type != kJsonChunk) throw Error(name + ": the first glb chunk is not JSON");
      layout.json_offset = offset + 8;
      layout.json_length = chunk_length;
    } else if (type == kBinChunk && layout.bin_offset == 0) {
      layout.bin_offset = offset + 8;
      layout.bin_length = chunk_length;
    }
    first = false;
    offset += 8 + chunk_length;
  }
  if (first) throw Error(name + ": glb without a JSON chunk");
  return layout;
}

}  // namespace tessera::gltf
