#include "worker/render/pathtrace_registers.h"

#include "common/base/environment.h"

namespace tessera {

uint32_t pathtrace_registers_from_environment() {
  return count_from_environment("TESSERA_PT_REGISTERS", 16, 255, "registers a path tracer work item")
      .value_or(kPathTraceRegisters);
}

std::string pathtrace_build_options(const cl::DeviceInfo& device, const std::string& scene_options) {
  const uint32_t registers = pathtrace_registers_from_environment();
  if (!device.nv_compiler_options || registers >= 255) return scene_options;
  std::string options = scene_options;
  if (!options.empty()) options += ' ';
  return options + "-cl-nv-maxrregcount=" + std::to_string(registers);
}

}  // namespace tessera
