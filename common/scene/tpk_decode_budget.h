#pragma once
// How many bytes a packed scene takes once decoded, known from its manifest alone, and the budget
// a loader holds it to. A .tpk compresses very well when its sections are uniform (a few hundred
// kilobytes can declare gigabytes of legal textures), so the file's size says nothing about the
// memory its decoding needs: parse_tpk checks the declared sizes against a budget before it
// decompresses anything, and refuses with one line that names both numbers and the limit.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "common/scene/tpk_file.h"
#include "tpk.pb.h"

namespace tessera {

struct DecodeBudget {
  uint64_t total_bytes = 0;    // every section and the tables loading derives from them (0: no limit)
  uint64_t section_bytes = 0;  // any one section: the largest buffer the device takes (0: no limit)
  std::string limit;           // what sets total_bytes, for the error ("--gpu-mem-limit", "this host's memory")
  std::string section_limit;   // what sets section_bytes
  // What the scene may put on the device (0: no limit), against the smallest profile's share
  // (smallest_device_scene_bytes): the exact check comes once the profile is chosen.
  uint64_t device_bytes = 0;
  std::string device_limit;    // what sets device_bytes ("--gpu-mem-limit", "the device's memory")
};

// The host's physical memory: what any loader may at most spend on a scene.
DecodeBudget host_decode_budget();

// `budget` with its total lowered to `bytes` (when lower), under the name `limit`.
DecodeBudget lower_total(DecodeBudget budget, uint64_t bytes, const std::string& limit);

// `budget` with its device bound lowered to `bytes` (when lower), under the name `limit`.
DecodeBudget lower_device(DecodeBudget budget, uint64_t bytes, const std::string& limit);

// Fewer bytes than any scene-memory profile puts on the device: the sections less the kd-trees.
uint64_t smallest_device_scene_bytes(const tpk::Manifest& manifest);

// The bytes a scene holds in memory once loaded: its sections' declared raw sizes and the vertex
// records, normal indices and compact kd-tree that loading builds from them.
uint64_t decoded_scene_bytes(const tpk::Manifest& manifest);

// Throws Error("<name>: ...") when the manifest's sections would exceed the budget.
void check_decode_budget(const tpk::Manifest& manifest, const DecodeBudget& budget, const std::string& name);

// parse_tpk and read_tpk (tpk_file.h) held to `budget`: nothing is decompressed unless the
// manifest's sections fit it. (The forms without a budget hold to host_decode_budget().)
TpkContents parse_tpk(std::span<const uint8_t> file, const std::string& name, const DecodeBudget& budget);
TpkContents read_tpk(const std::filesystem::path& path, const DecodeBudget& budget);

// "1.50 GB": byte counts in errors and logs.
std::string byte_text(uint64_t bytes);

}  // namespace tessera
