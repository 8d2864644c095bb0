#include "common/base/environment.h"

#include <cstdlib>
#include <string>

#include "common/base/error.h"

namespace tessera {

std::optional<uint32_t> count_from_environment(const char* name, uint32_t min, uint32_t max, const char* meaning) {
  const char* env = std::getenv(name);
  if (!env || !*env) return std::nullopt;
  char* end = nullptr;
  const unsigned long value = std::strtoul(env, &end, 10);
  if (*end != '\0' || env[0] < '0' || env[0] > '9' || value < min || value > max)
    throw Error(std::string("bad ") + name + " '" + env + "' (expected " + meaning + ", " + std::to_string(min) + "-" +
                std::to_string(max) + ")");
  return uint32_t(value);
}

}  // namespace tessera
