#pragma once
// On-disk cache of compiled program binaries, one file per (device, driver, source, options):
// PoCL and some GPU drivers take seconds to compile the big kernels, every program start.
// The cache is an optimisation only: nothing here throws, a missing, corrupt or unwritable
// entry simply means "compile from source".
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "common/cl/device_info.h"

namespace tessera::cl {

// $TESSERA_CACHE_DIR, else $XDG_CACHE_HOME/tessera/kernels, else ~/.cache/tessera/kernels;
// empty if none can be determined. TESSERA_CACHE_DIR=off (or "0") disables the cache.
std::filesystem::path kernel_cache_dir();

// Hash of everything that can change the compiled binary.
uint64_t program_cache_key(const DeviceInfo& device, std::string_view source, std::string_view options);

std::filesystem::path program_cache_file(const std::filesystem::path& dir, uint64_t key);

// The binary stored under `key`, or nullopt if absent, unreadable, truncated or corrupt.
std::optional<std::vector<uint8_t>> load_cached_binary(const std::filesystem::path& dir, uint64_t key);

// Writes the entry atomically (creating `dir`); false on any failure.
bool store_cached_binary(const std::filesystem::path& dir, uint64_t key, const std::vector<uint8_t>& binary) noexcept;

}  // namespace tessera::cl
