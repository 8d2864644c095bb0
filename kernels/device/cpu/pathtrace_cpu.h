#pragma once
// The host backend of the `pathtrace` mode: the per-pixel code of kernels/device/opencl/pathtrace.cl
// compiled for this CPU and run on threads (rows of both eyes handed out one at a time; each
// sample in two phases, first hits then paths, like the two OpenCL launches).
#include <atomic>
#include <cstdint>
#include <span>

#include "kernels/integrators/pathtrace.h"

namespace tessera::cpu {

// Traces pt.samples samples (indices pt.first_sample ...) of every pixel of both eyes (pt.eye_count)
// of pt's tile. own: PtPixelOut per pixel and eye (eye-major, rows top to bottom), overwritten;
// reproj: 4 floats per pixel and eye, overwritten. `stop` (optional) is polled between rows: once
// it turns true no further rows are started (rows not done keep samples = 0); returns the path
// rows completed over all samples.
uint32_t pathtrace_tile(const SceneView& scene, const ShadingContext& shading, const RenderSettings& settings,
                        const PathTraceParams& pt, const CameraParams& left, const CameraParams& right,
                        std::span<PtPixelOut> own, std::span<float> reproj, unsigned threads = 0,
                        const std::atomic<bool>* stop = nullptr);

}  // namespace tessera::cpu
