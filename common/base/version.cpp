#include "common/base/version.h"

// TESSERA_VERSION, TESSERA_BUILD_TYPE and TESSERA_OPENCL_HEADERS come from CMake at configure time
// (cmake/version.cmake); the commit from a file regenerated on every build, so that a new HEAD only
// recompiles that file (tessera_git_commit in the generated git_commit.cpp).
extern const char* const tessera_git_commit;

namespace tessera {

namespace {

std::string opencl_target() {
  const int target = CL_TARGET_OPENCL_VERSION;  // e.g. 120
  return std::to_string(target / 100) + "." + std::to_string(target / 10 % 10);
}

}  // namespace

const BuildInfo& build_info() {
  static const BuildInfo info{TESSERA_VERSION, tessera_git_commit, TESSERA_BUILD_TYPE, TESSERA_OPENCL_HEADERS,
                              opencl_target()};
  return info;
}

std::string build_description() {
  const BuildInfo& b = build_info();
  return b.version + " (commit " + b.commit + ", " + b.build_type + ", OpenCL headers " + b.opencl_headers + ", API " +
         b.opencl_target + ")";
}

std::string version_line(const std::string& program) { return program + " " + build_description(); }

}  // namespace tessera
