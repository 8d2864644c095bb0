#include "common/scene/tpk_sections.h"

#include <algorithm>

#include "common/base/error.h"
#include "common/scene/mip_chain.h"
#include "common/scene/scene_nodes.h"
#include "common/scene/tpk_file.h"

namespace tessera {
namespace {

// A kd-tree of n triangles has a few node slots and leaf references per triangle; these bounds
// are far above what the packer writes, yet keep a tiny file from claiming gigabytes of tree.
constexpr uint64_t kKdSlotsPerTriangle = 64, kKdRefsPerTriangle = 64, kKdSlack = 1 << 16;
constexpr uint64_t kMaxTextureSide = 16384;
constexpr uint64_t kMaxTexels = 0xFFFFFFFFull;  // texel indices are 32-bit on the device
constexpr uint64_t kMaxCount = 0xFFFFFFF0ull;   // triangles and vertices are 32-bit indices
constexpr uint64_t kMaxObjects = kMaxInstances;  // an object is worth storing only where placed
constexpr uint64_t kMaxSceneNodeBytes = 1ull << 29;  // the animation codec checks its own limits within

std::string kind_label(int kind) {
  const std::string known = tpk::SectionKind_IsValid(kind) ? tpk::SectionKind_Name(tpk::SectionKind(kind)) : "";
  return known.empty() ? "section kind " + std::to_string(kind) : known;
}

SectionRule exactly(uint64_t bytes, bool required, uint64_t unit) { return {true, required, unit, bytes, bytes}; }

}  // namespace

SectionRule section_rule(const tpk::Manifest& m, tpk::SectionKind kind, const std::string& name) {
  auto fail = [&](const std::string& what) -> Error { return Error(name + ": invalid scene: " + what); };
  const uint64_t nt = m.triangles(), nv = m.vertices();
  if (nt == 0 || nv == 0) throw fail("no triangles");
  if (nt > kMaxCount || nv > kMaxCount) throw fail("too many triangles or vertices");
  const auto& q = m.quantization();
  const bool instanced = m.objects() > 0;
  if (instanced && m.format_version() < 5) throw fail("objects in a file older than format version 5");
  if (m.objects() > kMaxObjects || m.objects() > nt) throw fail("bad object count");
  if (m.instances() > kMaxInstances) throw fail("more than " + std::to_string(kMaxInstances) + " instances, the most a scene may hold");
  if (m.instances() > 0 && !instanced) throw fail("instances without objects");
  switch (kind) {
    case tpk::TRIANGLES: return exactly(12 * nt, true, 4);
    case tpk::POSITIONS: return q.positions() ? SectionRule{} : exactly(12 * nv, true, 4);
    case tpk::QUANTIZED_VERTICES: return q.positions() ? exactly(8 * nv, true, 8) : SectionRule{};
    case tpk::CELL_TABLE:
      if (!q.positions()) return {};
      if (q.geometry_cells() == 0 || q.geometry_cells() > 65536) throw fail("bad geometry-cell count");
      return exactly(8ull * q.geometry_cells(), true, 8);
    case tpk::NORMALS: return q.normals() ? SectionRule{} : exactly(12 * nv, false, 4);
    case tpk::TEXCOORDS: return q.texcoords() ? SectionRule{} : exactly(8 * nv, false, 4);
    case tpk::TEXCOORDS_QUANTIZED: return q.texcoords() ? exactly(4 * nv, false, 4) : SectionRule{};
    case tpk::KD_NODES: return {true, true, 8, 8, 8 * (kKdSlotsPerTriangle * nt + kKdSlack)};
    case tpk::KD_LEAF_REFS: return {true, false, 4, 0, 4 * (kKdRefsPerTriangle * nt + kKdSlack)};
    case tpk::SCENE_OBJECTS: return instanced ? exactly(24ull * m.objects(), true, 4) : SectionRule{};
    case tpk::SCENE_INSTANCES: return instanced ? exactly(8ull * m.instances(), false, 4) : SectionRule{};
    case tpk::SCENE_NODES: return instanced ? SectionRule{true, true, 1, 12, kMaxSceneNodeBytes} : SectionRule{};
    case tpk::KD_NODES_COMPACT:  // optional: scenes without one trace the first tree in both profiles
      return m.format_version() >= 4 && !instanced ? SectionRule{true, false, 8, 8, 8 * (kKdSlotsPerTriangle * nt + kKdSlack)}
                                     : SectionRule{};
    case tpk::KD_LEAF_REFS_COMPACT:
      return m.format_version() >= 4 && !instanced ? SectionRule{true, false, 4, 0, 4 * (kKdRefsPerTriangle * nt + kKdSlack)}
                                     : SectionRule{};
    case tpk::MATERIAL_RUNS: return {true, true, 8, 8, 8 * nt};
    case tpk::TEXELS: {
      uint64_t texels = 0;  // textures lie back to back: at most the sum of their mip chains
      const bool mip_mapped = m.format_version() >= 3;  // version 2: level 0 alone, mip_levels unset
      for (const auto& t : m.textures()) {
        if (t.width() == 0 || t.height() == 0 || t.width() > kMaxTextureSide || t.height() > kMaxTextureSide)
          throw fail("texture '" + t.name() + "' has a bad size");
        if (mip_mapped ? t.mip_levels() == 0 || t.mip_levels() > full_mip_levels(t.width(), t.height()) : t.mip_levels() != 0)
          throw fail("texture '" + t.name() + "' has a bad mip level count");
        // < 2^28 * 4/3 each, the count of textures < 2^26
        texels += mip_chain_texels(t.width(), t.height(), std::max(1u, t.mip_levels()));
      }
      return {true, !m.textures().empty(), 4, 0, 4 * std::min(texels, kMaxTexels)};
    }
    default: return {};
  }
}

void check_sections(const tpk::Manifest& manifest, const std::vector<SectionSize>& sections, const std::string& name) {
  auto fail = [&](const std::string& what) -> Error { return Error(name + ": invalid scene: " + what); };
  // How positions decode: an unknown value would trace other vertices than the kd-trees were built over.
  const int decode = manifest.quantization().position_decode();
  if (!tpk::PositionDecode_IsValid(decode)) throw fail("unknown position decode " + std::to_string(decode));
  if (decode == tpk::LINEAR && manifest.format_version() < kTpkLinearPositionsVersion)
    throw fail("linear position decode in a file older than format version " + std::to_string(kTpkLinearPositionsVersion));
  std::vector<int> seen;
  for (const auto& s : sections) {
    const std::string label = kind_label(s.kind);
    if (!tpk::SectionKind_IsValid(s.kind) || s.kind == tpk::SECTION_UNKNOWN) throw fail("unknown " + label);
    if (std::find(seen.begin(), seen.end(), s.kind) != seen.end()) throw fail("duplicate section " + label);
    seen.push_back(s.kind);
    const SectionRule rule = section_rule(manifest, tpk::SectionKind(s.kind), name);
    if (!rule.allowed) throw fail(label + " does not belong in this scene");
    if (s.bytes == 0 && !rule.required) continue;
    if (s.bytes % rule.unit || s.bytes < rule.min_bytes || s.bytes > rule.max_bytes)
      throw fail(label + " holds " + std::to_string(s.bytes) + " bytes, expected " +
                 (rule.min_bytes == rule.max_bytes ? std::to_string(rule.min_bytes)
                                                   : std::to_string(rule.min_bytes) + " to " + std::to_string(rule.max_bytes)));
  }
  for (int kind = tpk::SectionKind_MIN; kind <= tpk::SectionKind_MAX; ++kind)
    if (tpk::SectionKind_IsValid(kind) && kind != tpk::SECTION_UNKNOWN &&
        section_rule(manifest, tpk::SectionKind(kind), name).required &&
        std::find(seen.begin(), seen.end(), kind) == seen.end())
      throw fail(kind_label(kind) + " is missing");
}

void check_section_entries(const tpk::Manifest& manifest, const std::string& name) {
  std::vector<SectionSize> sizes;
  for (const auto& s : manifest.sections()) sizes.push_back({int(s.kind()), s.raw_size()});
  check_sections(manifest, sizes, name);
}

}  // namespace tessera
