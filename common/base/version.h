#pragma once
// What a binary was built from: the project version, the git commit, the build type and the OpenCL
// headers. Every program prints it for --version and workers announce it in their Welcome.
#include <string>

namespace tessera {

struct BuildInfo {
  std::string version;         // project(VERSION) of the top-level CMakeLists.txt, e.g. "0.1.0"
  std::string commit;          // git commit (12 hex digits, "-dirty" with local changes) or "unknown"
  std::string build_type;      // CMAKE_BUILD_TYPE, e.g. "RelWithDebInfo"
  std::string opencl_headers;  // highest version the OpenCL C headers describe, e.g. "3.0"
  std::string opencl_target;   // OpenCL API version the code is built against, e.g. "1.2"
};

const BuildInfo& build_info();

// "0.1.0 (commit 0123456789ab, RelWithDebInfo, OpenCL headers 3.0, API 1.2)": the same text for every
// program of one build, so workers and masters can compare it.
std::string build_description();

// "tessera-worker 0.1.0 (commit ...)": the --version line.
std::string version_line(const std::string& program);

}  // namespace tessera
