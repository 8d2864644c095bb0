#pragma once
// The CPU backend of the kernels: the same per-pixel code as kernels/device/opencl/raytrace.cl,
// compiled for the host and run on a pool of threads. It is the reference the OpenCL build is
// tested against, and a renderer of its own on machines without OpenCL.
#include <cstdint>
#include <span>

#include "kernels/integrators/whitted.h"

namespace tessera::cpu {

struct TileRect {
  uint32_t x0, y0, width, height;
};

// Renders `tile` of the image described by `camera` into out (tile pixels row by row, RGBA8).
void raytrace_tile(const SceneView& scene, const ShadingContext& shading, const RenderSettings& settings,
                   const CameraParams& camera, const TileRect& tile, std::span<uint32_t> out, unsigned threads = 0);

}  // namespace tessera::cpu
