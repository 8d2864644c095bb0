#include "common/scene/tpk_file.h"

#include <cstring>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/base/hash.h"
#include "common/base/zstd_codec.h"
#include "common/scene/tpk_decode_budget.h"
#include "common/scene/tpk_index.h"
#include "common/scene/tpk_sections.h"

namespace tessera {
namespace {

void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
void put_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}
uint32_t get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}
uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

constexpr uint64_t kMaxManifestBytes = 64ull << 20;

}  // namespace

std::vector<uint8_t> assemble_tpk(tpk::Manifest& manifest, const std::vector<std::vector<uint8_t>>& stored) {
  if (size_t(manifest.sections_size()) != stored.size()) throw Error("assemble_tpk: one stored frame per section entry");
  manifest.set_format_version(tpk_version_for(manifest));
  uint64_t offset = 0;
  for (size_t i = 0; i < stored.size(); ++i) {
    tpk::Section* entry = manifest.mutable_sections(int(i));
    entry->set_offset(offset);
    entry->set_stored_size(stored[i].size());
    offset += stored[i].size();
  }
  std::string manifest_bytes;
  {
    google::protobuf::io::StringOutputStream raw_out(&manifest_bytes);
    google::protobuf::io::CodedOutputStream out(&raw_out);
    out.SetSerializationDeterministic(true);
    manifest.SerializeToCodedStream(&out);
  }
  const uint64_t total = kTpkHeaderSize + manifest_bytes.size() + offset;
  std::vector<uint8_t> file(kTpkHeaderSize);
  file.reserve(total);
  std::memcpy(file.data(), kTpkMagic, 8);
  put_u32(file.data() + 8, manifest.format_version());
  put_u32(file.data() + 12, uint32_t(manifest_bytes.size()));
  put_u64(file.data() + 16, hash64(manifest_bytes.data(), manifest_bytes.size()));
  file.insert(file.end(), manifest_bytes.begin(), manifest_bytes.end());
  for (const auto& s : stored) file.insert(file.end(), s.begin(), s.end());
  return file;
}

void write_tpk(const std::filesystem::path& path, tpk::Manifest& manifest, const std::vector<TpkSectionData>& sections,
               int zstd_level) {
  manifest.clear_sections();
  std::vector<std::vector<uint8_t>> stored;
  for (const auto& s : sections) {
    stored.push_back(zstd_compress(s.raw, s.zstd_level > 0 ? s.zstd_level : zstd_level));
    tpk::Section* entry = manifest.add_sections();
    entry->set_kind(s.kind);
    entry->set_raw_size(s.raw.size());
    entry->set_raw_xxh64(hash64(s.raw.data(), s.raw.size()));
    entry->set_stored_xxh64(hash64(stored.back().data(), stored.back().size()));
  }
  const std::vector<uint8_t> file = assemble_tpk(manifest, stored);
  write_file_atomically(path, file.data(), file.size());
}

namespace {

// Header, manifest, section entries and stored checksums; the sections' stored bytes start at
// `data_start`.
struct CheckedFile {
  TpkIndexEntry entry;
  uint64_t data_start = 0;
};

CheckedFile check_tpk(std::span<const uint8_t> file, const std::string& name) {
  auto fail = [&](const std::string& what) -> Error { return Error(name + ": " + what); };
  if (file.size() < kTpkHeaderSize || std::memcmp(file.data(), kTpkMagic, 8) != 0)
    throw fail("not a Tessera packed scene (.tpk)");
  const uint32_t version = get_u32(file.data() + 8);
  if (version < kTpkOldestReadableVersion || version > kTpkFormatVersion)
    throw fail("format version " + std::to_string(version) + " is not supported (this build reads versions " +
               std::to_string(kTpkOldestReadableVersion) + " to " + std::to_string(kTpkFormatVersion) +
               "); pack the scene again");
  const uint64_t manifest_size = get_u32(file.data() + 12);
  if (manifest_size > kMaxManifestBytes || kTpkHeaderSize + manifest_size > file.size())
    throw fail("truncated file (manifest incomplete)");
  const uint8_t* manifest_bytes = file.data() + kTpkHeaderSize;
  if (hash64(manifest_bytes, manifest_size) != get_u64(file.data() + 16)) throw fail("manifest checksum mismatch (corrupt file)");
  CheckedFile out;
  tpk::Manifest& manifest = out.entry.manifest;
  if (!manifest.ParseFromArray(manifest_bytes, int(manifest_size))) throw fail("manifest cannot be parsed (corrupt file)");
  if (manifest.format_version() != version) throw fail("manifest and header disagree on the format version");

  // Kinds and raw sizes against what the manifest's counts allow, before anything is decoded.
  check_section_entries(manifest, name);

  out.data_start = kTpkHeaderSize + manifest_size;
  const uint64_t data_size = file.size() - out.data_start;
  uint64_t expected_offset = 0;
  for (const auto& s : manifest.sections()) {
    const std::string label = tpk::SectionKind_Name(s.kind());  // a known kind: checked above
    if (s.offset() != expected_offset || !range_within(s.offset(), s.stored_size(), data_size))
      throw fail("truncated file (" + label + " lies beyond the end)");
    if (hash64(file.data() + out.data_start + s.offset(), s.stored_size()) != s.stored_xxh64())
      throw fail(label + " checksum mismatch (corrupt file)");
    expected_offset += s.stored_size();
  }
  if (expected_offset != data_size) throw fail("unexpected bytes after the last section");
  out.entry.content_hash = hash64(file.data(), file.size());
  return out;
}

}  // namespace

TpkIndexEntry inspect_tpk(std::span<const uint8_t> file, const std::string& name) { return check_tpk(file, name).entry; }

TpkContents parse_tpk(std::span<const uint8_t> file, const std::string& name, const DecodeBudget& budget) {
  CheckedFile checked = check_tpk(file, name);
  check_decode_budget(checked.entry.manifest, budget, name);
  TpkContents out;
  out.manifest = std::move(checked.entry.manifest);
  out.content_hash = checked.entry.content_hash;
  for (const auto& s : out.manifest.sections()) {
    const std::string label = tpk::SectionKind_Name(s.kind());
    std::vector<uint8_t> raw;
    try {
      raw = zstd_decompress(file.subspan(checked.data_start + s.offset(), s.stored_size()), s.raw_size());
    } catch (const Error& e) {
      throw Error(name + ": " + label + ": " + e.what());
    }
    if (hash64(raw.data(), raw.size()) != s.raw_xxh64()) throw Error(name + ": " + label + " decompressed checksum mismatch");
    out.sections.push_back({s.kind(), std::move(raw)});
  }
  return out;
}

TpkContents parse_tpk(std::span<const uint8_t> file, const std::string& name) {
  return parse_tpk(file, name, host_decode_budget());
}

TpkContents read_tpk(const std::filesystem::path& path, const DecodeBudget& budget) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  return parse_tpk(bytes, path.string(), budget);
}

TpkContents read_tpk(const std::filesystem::path& path) { return read_tpk(path, host_decode_budget()); }

}  // namespace tessera
