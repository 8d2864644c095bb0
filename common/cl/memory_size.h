#pragma once
// Memory sizes as users type them (--gpu-mem-limit 950M) and as messages print them.
// All units are binary, as drivers report device memory: K = KB = KiB = 1024 bytes, M = 2^20,
// G = 2^30, T = 2^40; so "950MB" and the printed "950 MB" mean the same amount.
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::cl {

// Accepts "950M", "950MB", "950 MiB", "1.5G", "2GiB", "512K", "1048576", "4096B" (case-insensitive).
// Throws Error for garbage, zero, a fraction of a byte, or a value beyond 2^64.
uint64_t parse_memory_size(std::string_view text);

// Three significant digits, trailing zeros dropped: "512 B", "1.5 KB", "610 MB", "1.21 GB".
std::string format_memory_size(uint64_t bytes);

}  // namespace tessera::cl
