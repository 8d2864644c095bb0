#pragma once
// The table behind linear_to_srgb8 (common/image/image.h): entry c is the smallest linear value
// that encodes to sRGB code c + 1. Device code searches the same table (kernels/shading/color.h),
// so 8-bit pixels encoded on a device match the host's bit for bit.
#include <array>

namespace tessera {

const std::array<float, 255>& linear_to_srgb8_thresholds();

}  // namespace tessera
