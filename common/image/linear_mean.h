#pragma once
// The mean of 8-bit sRGB images in linear light, defined once for everything that averages
// rendered samples (tessera-render --aa, the master's SampleAccumulator): every colour channel of
// every image decoded to linear (srgb8_to_linear), summed as float in the order the images were
// added, divided by their count and encoded to the nearest 8-bit sRGB code (linear_to_srgb8);
// alpha (straight, not a colour) averaged as it is and rounded. The mean of one image is that
// image, bit for bit.
#include <cstdint>
#include <vector>

#include "common/image/image.h"

namespace tessera {

class LinearMean {
 public:
  // Throws Error when `image` is empty or differs in size from the images already added.
  void add(const ImageRgba8& image);
  uint32_t count() const noexcept { return count_; }
  int width() const noexcept { return width_; }
  int height() const noexcept { return height_; }
  // Throws Error when nothing was added.
  ImageRgba8 mean() const;
  // Forgets the images and gives the sums' memory back (16 bytes a pixel).
  void clear();
  size_t bytes_held() const noexcept { return sum_.capacity() * sizeof(float); }

 private:
  int width_ = 0, height_ = 0;
  uint32_t count_ = 0;
  std::vector<float> sum_;  // 4 floats a pixel: linear r, g, b and alpha / 255
};

}  // namespace tessera
