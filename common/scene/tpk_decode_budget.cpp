#include "common/scene/tpk_decode_budget.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <vector>

#include "common/base/error.h"
#include "common/base/memory_usage.h"

namespace tessera {

std::string byte_text(uint64_t bytes) {
  char text[32];
  if (bytes >= (uint64_t(1) << 30)) std::snprintf(text, sizeof text, "%.2f GB", double(bytes) / double(uint64_t(1) << 30));
  else if (bytes >= (uint64_t(1) << 20)) std::snprintf(text, sizeof text, "%.1f MB", double(bytes) / double(1 << 20));
  else std::snprintf(text, sizeof text, "%.1f KB", double(bytes) / 1024.0);
  return text;
}

DecodeBudget host_decode_budget() {
  DecodeBudget budget;
  budget.total_bytes = host_memory_bytes();
  budget.limit = "this host's memory";
  return budget;
}

DecodeBudget lower_total(DecodeBudget budget, uint64_t bytes, const std::string& limit) {
  if (bytes != 0 && (budget.total_bytes == 0 || bytes < budget.total_bytes)) {
    budget.total_bytes = bytes;
    budget.limit = limit;
  }
  return budget;
}

DecodeBudget lower_device(DecodeBudget budget, uint64_t bytes, const std::string& limit) {
  if (bytes != 0 && (budget.device_bytes == 0 || bytes < budget.device_bytes)) {
    budget.device_bytes = bytes;
    budget.device_limit = limit;
  }
  return budget;
}

uint64_t smallest_device_scene_bytes(const tpk::Manifest& manifest) {
  // A bound from below, so the exact check of the chosen profile decides near the limit: every
  // section as stored, less the kd-trees (each profile holds one of them, in its own layout).
  uint64_t bytes = 0;
  for (const auto& s : manifest.sections())
    if (s.kind() != tpk::KD_NODES && s.kind() != tpk::KD_LEAF_REFS && s.kind() != tpk::KD_NODES_COMPACT &&
        s.kind() != tpk::KD_LEAF_REFS_COMPACT)
      bytes += s.raw_size();
  return bytes;
}

uint64_t decoded_scene_bytes(const tpk::Manifest& manifest) {
  uint64_t bytes = 0;
  for (const auto& s : manifest.sections()) {
    bytes += s.raw_size();  // each bounded by the section rules: no overflow
    if (s.kind() == tpk::KD_NODES) bytes += s.raw_size();  // the compact copy traversal reads
  }
  const auto& q = manifest.quantization();
  if (q.positions()) bytes += 16 * manifest.vertices();  // vertex records
  if (q.normals()) bytes += 2 * manifest.vertices();     // normal indices
  return bytes;
}

void check_decode_budget(const tpk::Manifest& manifest, const DecodeBudget& budget, const std::string& name) {
  for (const auto& s : manifest.sections())
    if (budget.section_bytes != 0 && s.raw_size() > budget.section_bytes)
      throw Error(name + ": section " + tpk::SectionKind_Name(s.kind()) + " decodes to " + byte_text(s.raw_size()) +
                  ", more than " + budget.section_limit + " (" + byte_text(budget.section_bytes) + ")");
  const uint64_t total = decoded_scene_bytes(manifest), on_device = smallest_device_scene_bytes(manifest);
  const bool host_fits = budget.total_bytes == 0 || total <= budget.total_bytes;
  const bool device_fits = budget.device_bytes == 0 || on_device <= budget.device_bytes;
  if (host_fits && device_fits) return;
  // What takes the room: the three largest sections ("texels 1.33 GB, kd_nodes 2.1 MB, ...").
  std::vector<const tpk::Section*> largest;
  for (const auto& s : manifest.sections()) largest.push_back(&s);
  std::sort(largest.begin(), largest.end(), [](const auto* a, const auto* b) { return a->raw_size() > b->raw_size(); });
  std::string sections;
  for (size_t i = 0; i < largest.size() && i < 3; ++i) {
    std::string kind = tpk::SectionKind_Name(largest[i]->kind());
    std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    sections += (i ? ", " : "") + kind + " " + byte_text(largest[i]->raw_size());
  }
  if (!host_fits)
    throw Error(name + ": scene decodes to " + byte_text(total) + ", more than " + budget.limit + " (" +
                byte_text(budget.total_bytes) + "); refused before decoding (largest: " + sections + ")");
  throw Error(name + ": scene needs at least " + byte_text(on_device) + " on the device, more than " + budget.device_limit + " (" +
              byte_text(budget.device_bytes) + "); refused before decoding (largest: " + sections + ")");
}

}  // namespace tessera
