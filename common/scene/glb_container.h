#pragma once
// The binary glTF container (.glb): a 12-byte header (magic "glTF", version 2, total length),
// a JSON chunk, then optionally a BIN chunk (chunks of unknown type are skipped, as the
// specification asks). Checked here before any parser sees the bytes.
#include <cstdint>
#include <span>
#include <string>

namespace tessera::gltf {

struct GlbLayout {
  uint64_t json_offset = 0, json_length = 0;
  uint64_t bin_offset = 0, bin_length = 0;  // bin_length 0: no BIN chunk
};

bool looks_like_glb(std::span<const uint8_t> bytes);

// Throws tessera::Error naming `name` for a wrong magic or version, a length that disagrees with
// the file's size, or a chunk that runs past the end.
GlbLayout check_glb(std::span<const uint8_t> bytes, const std::string& name);

}  // namespace tessera::gltf
