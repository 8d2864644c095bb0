#pragma once
// The peer column of `tessera-bench rays`: Embree (Debian's libembree, when built in) tracing the
// very same rays on all CPU cores with rtcIntersect1 / rtcOccluded1.
#include <array>
#include <string>
#include <vector>

#include "kernels/render/camera.h"
#include "worker/bench/ray_bench.h"

namespace tessera::bench {

std::array<float, 3> bench_light_position(const PackedScene& scene);

// The same three ray kinds traced by the host build of the kernels (kernels/device/cpu).
std::vector<RayKindResult> host_trace(const PackedScene& scene, const CameraParams& camera, const std::array<float, 3>& light,
                                      const RayBenchOptions& options);

// Returns primary, shadow and diffuse results, or nothing (with `note` saying why).
std::vector<RayKindResult> embree_trace(const PackedScene& scene, const CameraParams& camera, const std::array<float, 3>& light,
                                        const RayBenchOptions& options, std::string& note);

}  // namespace tessera::bench
