#include "common/cl/program_cache.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "common/base/file_io.h"
#include "common/base/hash.h"

namespace tessera::cl {
namespace {

// Bump when the entry layout or the key material changes.
constexpr char kMagic[8] = {'T', 'S', 'C', 'L', 'B', 'I', 'N', '1'};

struct EntryHeader {
  char magic[8];
  uint64_t key;
  uint64_t size;
  uint64_t checksum;  // hash64 of the binary
};

void append_field(std::string& material, std::string_view field) {
  // Length-prefixed, so ("ab", "c") and ("a", "bc") hash differently.
  const uint64_t size = field.size();
  material.append(reinterpret_cast<const char*>(&size), sizeof size);
  material.append(field);
}

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

}  // namespace

std::filesystem::path kernel_cache_dir() {
  if (const char* dir = env("TESSERA_CACHE_DIR")) {
    const std::string_view value = dir;
    if (value == "off" || value == "0") return {};
    return dir;
  }
  if (const char* xdg = env("XDG_CACHE_HOME")) return std::filesystem::path(xdg) / "tessera" / "kernels";
  if (const char* home = env("HOME")) return std::filesystem::path(home) / ".cache" / "tessera" / "kernels";
  return {};
}

uint64_t program_cache_key(const DeviceInfo& device, std::string_view source, std::string_view options) {
  std::string material;
  for (std::string_view field : {std::string_view(kMagic, sizeof kMagic), std::string_view(device.name),
                                 std::string_view(device.vendor), std::string_view(device.driver_version),
                                 std::string_view(device.device_version), std::string_view(device.platform_name),
                                 std::string_view(device.platform_version), options, source})
    append_field(material, field);
  return hash64(material.data(), material.size());
}

std::filesystem::path program_cache_file(const std::filesystem::path& dir, uint64_t key) {
  return dir / (hash64_hex(key) + ".clbin");
}

std::optional<std::vector<uint8_t>> load_cached_binary(const std::filesystem::path& dir, uint64_t key) {
  if (dir.empty()) return std::nullopt;
  try {
    const std::filesystem::path file = program_cache_file(dir, key);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) return std::nullopt;
    const std::vector<uint8_t> bytes = read_file_bytes(file);
    EntryHeader header;
    if (bytes.size() < sizeof header) return std::nullopt;
    std::memcpy(&header, bytes.data(), sizeof header);
    if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0 || header.key != key ||
        header.size != bytes.size() - sizeof header || header.size == 0)
      return std::nullopt;
    std::vector<uint8_t> binary(bytes.begin() + sizeof header, bytes.end());
    if (hash64(binary.data(), binary.size()) != header.checksum) return std::nullopt;
    return binary;
  } catch (...) {
    return std::nullopt;
  }
}

bool store_cached_binary(const std::filesystem::path& dir, uint64_t key, const std::vector<uint8_t>& binary) noexcept {
  if (dir.empty() || binary.empty()) return false;
  // write_file_atomically names its temporary file by process id: serialise writers in this
  // process so two threads building the same program do not share one temporary file.
  static std::mutex mutex;
  try {
    std::lock_guard lock(mutex);
    std::filesystem::create_directories(dir);
    EntryHeader header;
    std::memcpy(header.magic, kMagic, sizeof kMagic);
    header.key = key;
    header.size = binary.size();
    header.checksum = hash64(binary.data(), binary.size());
    write_file_atomically(program_cache_file(dir, key), [&](std::FILE* file) {
      write_all(file, &header, sizeof header);
      write_all(file, binary.data(), binary.size());
    });
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace tessera::cl
