#pragma once
// The depth a page reprojects with, at a resolution that suits the link: reprojection moves whole
// surfaces, so a depth sample per k x k pixels (k chosen from the eye width) keeps the warp while a
// stereo 2x1024^2 frame's depth shrinks 16-fold — full-resolution 16-bit depth cost more bytes,
// compress time and page inflate time than the JPEG itself.
#include <cstdint>
#include <vector>

namespace tessera {

inline constexpr uint32_t kDepthPlaneEyeWidth = 256;  // at most this many depth samples across an eye

// k for an eye `eye_width` pixels wide: the smallest whole factor that brings it to kDepthPlaneEyeWidth.
uint32_t depth_plane_scale(uint32_t eye_width);

// Rows of `eyes` side-by-side eye images (eye_width x height each), every k x k block of an eye
// (cut at the eye's right and bottom edges) as its largest inverse depth: the nearest surface in
// the block, so that a foreground edge never takes the background's depth. k = 1 copies.
std::vector<uint16_t> downsample_depth(const std::vector<uint16_t>& depth, uint32_t eye_width, uint32_t height,
                                       uint32_t eyes, uint32_t k);

inline uint32_t depth_plane_size(uint32_t pixels, uint32_t k) { return (pixels + k - 1) / k; }

}  // namespace tessera
