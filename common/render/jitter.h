#pragma once
// Anti-aliasing by jittered samples: the k-th sample of a pixel traces through the pixel centre
// shifted by jitter_offset(k), and the mean of samples 0..N-1 in linear light is the anti-aliased
// image (tessera-render --aa N, the master's refinement while a pose holds). The offsets are the
// Halton(2, 3) low-discrepancy points, whose first N cover the pixel evenly for every N, with
// point 0 (the pixel's corner) moved to the centre: then every N of samples is centred on the
// pixel in x when N is a power of two and in y when it is a power of three, and close to it
// otherwise.
#include <array>
#include <cstdint>

#include "kernels/render/camera.h"

namespace tessera {

// Offset of sample `sample_index` in pixels, each coordinate within (-0.5, 0.5); sample 0 is the
// pixel centre (0, 0), so a single sample is the image without anti-aliasing.
std::array<float, 2> jitter_offset(uint32_t sample_index);

// `camera` with every ray shifted by `offset` pixels: camera_direction is linear in x / width and
// y / height, so moving the frustum's edges by the offset's share of the frustum moves every ray
// (of the whole image, hence of every tile) the same way. An offset of (0, 0) returns `camera`
// unchanged, bit for bit.
CameraParams jittered_camera(const CameraParams& camera, std::array<float, 2> offset);

}  // namespace tessera
