#pragma once
// Indexing a folder of packed scenes without decoding them: everything parse_tpk checks short of
// decompressing (header, manifest and its checksum, the section entries against the manifest's
// counts, offsets, every section's stored checksum) and the file's content hash. A scene's
// sections are decoded when it is used, within its loader's decode budget (tpk_decode_budget.h),
// so a folder of small files that decode to gigabytes costs its readers nothing up front.
#include <cstdint>
#include <span>
#include <string>

#include "tpk.pb.h"

namespace tessera {

struct TpkIndexEntry {
  tpk::Manifest manifest;
  uint64_t content_hash = 0;  // XXH64 of the whole file
};

// Throws Error naming `name` and the first problem found, as parse_tpk does.
TpkIndexEntry inspect_tpk(std::span<const uint8_t> file, const std::string& name);

}  // namespace tessera
