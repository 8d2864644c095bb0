#pragma once
// Anti-aliasing by jittered samples: the k-th sample of a pixel traces through the pixel centre
// shifted by jitter_offset(k), and the mean of samples 0..N-1 in linear light is the anti-aliased
// image (tessera-render --aa N, the master's refinement while a pose holds). The offsets come
// from the R2 sequence (Roberts 2018), which covers the pixel evenly for every N, not only powers
// of two.
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
