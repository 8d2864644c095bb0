#pragma once
// Building OpenCL programs from the embedded kernel sources, through the per-device binary cache.
// "-cl-std=CL1.2" is always used; options that relax floating point (fast-relaxed-math,
// mad-enable, ...) are refused, because host and device renders must match bit for bit.
#include <CL/cl.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "common/cl/handle.h"
#include "common/cl/kernel.h"

namespace tessera::cl {

class Device;

enum class CacheUse { enabled, disabled };

struct BuildReport {
  bool cache_hit = false;            // loaded from the binary cache, no compile from source
  std::filesystem::path cache_file;  // empty when the cache is disabled or unavailable
  std::string cache_note;            // why the cache was not used or not written, for logs; often empty
  std::string options;               // the options the program was built with
  std::string log;                   // compiler output (warnings) of a successful build, trimmed
  double seconds = 0;                // wall time of load or build
};

class Program {
 public:
  Program(ProgramHandle program, std::string name, BuildReport report)
      : program_(std::move(program)), name_(std::move(name)), report_(std::move(report)) {}

  cl_program get() const { return program_.get(); }
  const std::string& name() const { return name_; }  // entry path, or the name given to a source
  const BuildReport& report() const { return report_; }
  bool cache_hit() const { return report_.cache_hit; }

  Kernel kernel(const std::string& kernel_name) const { return Kernel(program_.get(), kernel_name); }

 private:
  ProgramHandle program_;
  std::string name_;
  BuildReport report_;
};

// Builds an embedded entry file such as "kernels/device/opencl/raytrace.cl", resolving its
// includes (see source_resolver.h). Throws ClError; a failed compile's message holds the build log.
Program build_program(const Device& device, std::string_view entry_path, std::string_view options = {},
                      CacheUse cache = CacheUse::enabled);

// Same for a caller-given source; its `#include "kernels/..."` lines still resolve to embedded files.
Program build_program_from_source(const Device& device, std::string_view source, std::string_view options = {},
                                  std::string_view source_name = "<source>", CacheUse cache = CacheUse::enabled);

// "-cl-std=CL1.2" + `options`; throws Error for options that would change float results.
std::string final_build_options(std::string_view options);

// Whether programs for this device take the kernels' CPU paths (SIMD leaf tests, ray packets; built
// with -D TS_DEVICE_CPU): on CPU devices, unless TESSERA_CPU_PATHS=off asks for the GPU code path
// (the same hits; tests compare the two on PoCL). Callers size their launches by it.
bool uses_cpu_paths(const Device& device);

}  // namespace tessera::cl
