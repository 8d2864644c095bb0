#pragma once
// The input form of the tpk_validate harness: a .tpk laid out as usual (header, manifest, section
// data) except that each section's stored bytes are its raw bytes, uncompressed, and no checksum
// needs to be right. seal() makes a loadable file of it: every section becomes a zstd frame of
// raw blocks that does not declare its size (so the declared raw_size is all a loader has to go
// on, as with a crafted file), and offsets, stored sizes and every checksum are recomputed. So
// mutations of the manifest and of the section contents reach the scene validation.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/base/hash.h"
#include "common/scene/tpk_file.h"

namespace tessera::fuzz {

// A zstd frame without a content size, holding `raw` in raw (stored) blocks.
inline std::vector<uint8_t> zstd_raw_frame(std::span<const uint8_t> raw) {
  constexpr size_t kBlock = 128 * 1024;
  std::vector<uint8_t> frame = {0x28, 0xB5, 0x2F, 0xFD,  // magic
                                0x00,                    // no content size, not single-segment
                                0x38};                   // window 2^17: one whole block
  size_t pos = 0;
  do {
    const size_t n = std::min(kBlock, raw.size() - pos);
    const uint32_t header = uint32_t(n) << 3 | (pos + n == raw.size() ? 1u : 0u);  // raw block, last?
    frame.insert(frame.end(), {uint8_t(header), uint8_t(header >> 8), uint8_t(header >> 16)});
    frame.insert(frame.end(), raw.begin() + pos, raw.begin() + pos + n);
    pos += n;
  } while (pos < raw.size());
  return frame;
}

inline uint32_t read_u32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }

// nullopt when the input has no parseable manifest.
inline std::optional<std::vector<uint8_t>> seal(std::span<const uint8_t> unsealed) {
  if (unsealed.size() < kTpkHeaderSize) return std::nullopt;
  const size_t manifest_size = read_u32(unsealed.data() + 12);
  if (manifest_size > unsealed.size() - kTpkHeaderSize) return std::nullopt;
  tpk::Manifest manifest;
  if (!manifest.ParseFromArray(unsealed.data() + kTpkHeaderSize, int(manifest_size))) return std::nullopt;
  const std::span<const uint8_t> data = unsealed.subspan(kTpkHeaderSize + manifest_size);
  std::vector<std::vector<uint8_t>> stored;
  for (auto& entry : *manifest.mutable_sections()) {
    const uint64_t offset = std::min<uint64_t>(entry.offset(), data.size());
    const auto raw = data.subspan(offset, std::min<uint64_t>(entry.stored_size(), data.size() - offset));
    stored.push_back(zstd_raw_frame(raw));
    entry.set_raw_xxh64(hash64(raw.data(), raw.size()));
    entry.set_stored_xxh64(hash64(stored.back().data(), stored.back().size()));
  }
  return assemble_tpk(manifest, stored);
}

// The inverse, for making seeds from packed scenes (fuzz-tpk-unseal).
inline std::vector<uint8_t> unseal(const TpkContents& contents) {
  tpk::Manifest manifest = contents.manifest;
  std::vector<std::vector<uint8_t>> raw;
  for (const auto& s : contents.sections) raw.push_back(s.raw);
  return assemble_tpk(manifest, raw);
}

}  // namespace tessera::fuzz
