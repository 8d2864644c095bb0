#pragma once
// The CPU backend of the depth and coverage pass: kernels/integrators/primary_aux.h per pixel, as
// kernels/device/opencl/raytrace.cl's primary_aux_tiles runs it, on a pool of threads.
#include <cstdint>
#include <span>

#include "kernels/device/cpu/raytrace_cpu.h"
#include "kernels/integrators/primary_aux.h"

namespace tessera::cpu {

// The aux_pack words of `tile` of the image described by `camera` into out (tile pixels row by row).
void primary_aux_tile(const SceneView& scene, const ShadingContext& shading, const RenderSettings& settings,
                      const AuxSettings& aux, const CameraParams& camera, const TileRect& tile, std::span<uint32_t> out,
                      unsigned threads = 0);

}  // namespace tessera::cpu
