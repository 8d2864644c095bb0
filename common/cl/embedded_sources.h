#pragma once
// Kernel sources compiled into the binary (see kernels/embed_kernels.cmake).
#include <string_view>
#include <vector>

namespace tessera::cl_embedded {

struct EmbeddedSource {
  std::string_view path;  // relative to the repository root, e.g. "kernels/camera.h"
  std::string_view text;
};

const std::vector<EmbeddedSource>& all_sources();

}  // namespace tessera::cl_embedded
