#pragma once
// The register budget of the path tracer's OpenCL program. Its paths kernels carry a whole path's
// state and take 110-119 registers a work item when the compiler chooses, so an SM holds few of
// them; capped at 56 (a few values then live in L1-cached local memory) the H100 traced Crytek
// Sponza's stereo frame 30 % faster (kernels 10.2 -> 7.1 ms). The cap is NVIDIA's build option
// (cl_nv_compiler_options); other devices build as before.
#include <cstdint>
#include <string>

#include "common/cl/device_info.h"

namespace tessera {

inline constexpr uint32_t kPathTraceRegisters = 56;

// TESSERA_PT_REGISTERS=N (16-255): the cap instead of kPathTraceRegisters (255: the compiler's
// choice). kPathTraceRegisters when unset or empty; throws Error on any other value.
uint32_t pathtrace_registers_from_environment();

// The path tracer program's build options: `scene_options` (DeviceScene::build_options) and, where
// the device takes NVIDIA's options, the register cap.
std::string pathtrace_build_options(const cl::DeviceInfo& device, const std::string& scene_options);

}  // namespace tessera
