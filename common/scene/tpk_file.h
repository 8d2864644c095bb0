#pragma once
// Reading and writing packed scenes (.tpk). The layout is described at the top of
// proto/tpk.proto. Writing is deterministic: the same manifest and sections give the same bytes.
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "tpk.pb.h"

namespace tessera {

// 2: interleaved quantized vertices; 3: mip-mapped textures (Texture.mip_levels); 4: a second kd-tree
// for the compact scene-memory profile (KD_NODES_COMPACT, optional); 5: objects and instances
// (SCENE_OBJECTS, SCENE_INSTANCES, SCENE_NODES); 6: positions that decode linearly
// (Quantization.position_decode LINEAR). A file is written with the oldest version that holds it
// (tpk_version_for): a scene without objects and with the earlier decode is a version 4 file, byte for
// byte as before.
inline constexpr uint32_t kTpkFormatVersion = 6;
inline constexpr uint32_t kTpkInstancedVersion = 5;
inline constexpr uint32_t kTpkLinearPositionsVersion = 6;
// The oldest version still read: version 2 differs only in its textures having no mip levels, and
// renders with level 0 alone; version 3 has no compact tree (both profiles trace its one tree).
inline constexpr uint32_t kTpkOldestReadableVersion = 2;
inline constexpr char kTpkMagic[8] = {'T', 'E', 'S', 'S', 'T', 'P', 'K', '\0'};
inline constexpr size_t kTpkHeaderSize = 24;

// The version a manifest is written with: kTpkLinearPositionsVersion for linearly decoded positions,
// else kTpkInstancedVersion for a scene with objects, else 4.
inline uint32_t tpk_version_for(const tpk::Manifest& manifest) {
  if (manifest.quantization().position_decode() != tpk::CELL_PLUS_OFFSET) return kTpkLinearPositionsVersion;
  return manifest.objects() > 0 ? kTpkInstancedVersion : 4;
}

struct TpkSectionData {
  tpk::SectionKind kind;
  std::vector<uint8_t> raw;
  int zstd_level = 0;  // 0: the level write_tpk is given
};

template <typename T>
TpkSectionData make_section(tpk::SectionKind kind, const std::vector<T>& values) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
  return {kind, std::vector<uint8_t>(bytes, bytes + values.size() * sizeof(T))};
}

// Compresses the sections (each at its own zstd_level, else at zstd_level), fills
// manifest.sections and format_version, and writes the file atomically. `manifest` is updated in place so callers can report section sizes.
void write_tpk(const std::filesystem::path& path, tpk::Manifest& manifest, const std::vector<TpkSectionData>& sections,
               int zstd_level);

// The file's bytes for a manifest whose section entries hold kind, raw size and checksums, with
// `stored` the frames of those sections in order: fills in offsets, stored sizes, the format
// version and the header. write_tpk writes what it returns; tools that craft files use it too.
std::vector<uint8_t> assemble_tpk(tpk::Manifest& manifest, const std::vector<std::vector<uint8_t>>& stored);

// The whole file in memory, validated: header, manifest checksum, every section's checksums and
// sizes. Throws tessera::Error naming the file and the first problem found.
struct TpkContents {
  tpk::Manifest manifest;
  std::vector<TpkSectionData> sections;  // in manifest order, decompressed
  uint64_t content_hash = 0;             // XXH64 of the whole file: the scene's identity
};
TpkContents read_tpk(const std::filesystem::path& path);
TpkContents parse_tpk(std::span<const uint8_t> file, const std::string& name);

}  // namespace tessera
