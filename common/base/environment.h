#pragma once
// Whole-number settings read from the environment (TESSERA_* switches of the render kernels).
#include <cstdint>
#include <optional>

namespace tessera {

// The value of variable `name` as a whole number in [min, max]; nothing when it is unset or empty.
// Throws Error naming the variable, the value and `meaning` for anything else ("12x", "-1", 0 < min).
std::optional<uint32_t> count_from_environment(const char* name, uint32_t min, uint32_t max, const char* meaning);

}  // namespace tessera
