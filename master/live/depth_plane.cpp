#include "master/live/depth_plane.h"

#include <algorithm>

namespace tessera {

uint32_t depth_plane_scale(uint32_t eye_width) {
  return std::max<uint32_t>(1, (eye_width + kDepthPlaneEyeWidth - 1) / kDepthPlaneEyeWidth);
}

std::vector<uint16_t> downsample_depth(const std::vector<uint16_t>& depth, uint32_t eye_width, uint32_t height,
                                       uint32_t eyes, uint32_t k) {
  if (k <= 1) return depth;
  const uint32_t out_eye = depth_plane_size(eye_width, k), out_height = depth_plane_size(height, k);
  const size_t in_stride = size_t(eye_width) * eyes, out_stride = size_t(out_eye) * eyes;
  std::vector<uint16_t> out(out_stride * out_height, 0);
  for (uint32_t y = 0; y < height; ++y) {
    uint16_t* row = out.data() + size_t(y / k) * out_stride;
    const uint16_t* in = depth.data() + size_t(y) * in_stride;
    for (uint32_t e = 0; e < eyes; ++e)
      for (uint32_t x = 0; x < eye_width; ++x) {
        uint16_t& q = row[size_t(e) * out_eye + x / k];
        q = std::max(q, in[size_t(e) * eye_width + x]);
      }
  }
  return out;
}

}  // namespace tessera
