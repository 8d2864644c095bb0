#pragma once
// What the counts in a .tpk manifest imply about its sections, known before anything is
// decompressed: which kinds may appear, which must, and how many raw bytes each may hold.
// parse_tpk checks every section entry against these rules before decoding it (so a crafted
// manifest cannot make a loader allocate more than its counts justify) and PackedScene checks the
// decoded sections against the same rules; both the worker and the master load scenes that way.
#include <cstdint>
#include <string>
#include <vector>

#include "tpk.pb.h"

namespace tessera {

struct SectionRule {
  bool allowed = false;   // unknown kinds, and kinds the manifest's flags rule out, are refused
  bool required = false;
  uint64_t unit = 1;      // the raw size is a multiple of this
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;  // equal to min_bytes where the counts fix the size exactly
};

// Throws Error("<name>: invalid scene: ...") when the manifest's counts are implausible.
SectionRule section_rule(const tpk::Manifest& manifest, tpk::SectionKind kind, const std::string& name);

// Sections as (kind, raw bytes) against their rules: known kinds only, each allowed by the
// manifest, none twice, sizes within the rules (an optional section may be empty), every
// required one present. Throws Error("<name>: invalid scene: ...").
struct SectionSize {
  int kind;  // as stored: not necessarily a known SectionKind
  uint64_t bytes;
};
void check_sections(const tpk::Manifest& manifest, const std::vector<SectionSize>& sections, const std::string& name);
// The same for the manifest's own section entries (their declared raw sizes).
void check_section_entries(const tpk::Manifest& manifest, const std::string& name);

// True when [offset, offset + count) lies inside [0, size), without overflow for any inputs.
inline bool range_within(uint64_t offset, uint64_t count, uint64_t size) { return offset <= size && count <= size - offset; }

}  // namespace tessera
