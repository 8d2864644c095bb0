#include "common/image/linear_mean.h"

#include <algorithm>
#include <cmath>

#include "common/base/error.h"

namespace tessera {

void LinearMean::add(const ImageRgba8& image) {
  if (image.empty()) throw Error("linear mean: empty image");
  if (count_ == 0) {
    width_ = image.width();
    height_ = image.height();
    sum_.assign(image.pixel_count() * 4, 0.0f);
  } else if (image.width() != width_ || image.height() != height_) {
    throw Error("linear mean: a " + std::to_string(image.width()) + "x" + std::to_string(image.height()) +
                " image added to " + std::to_string(width_) + "x" + std::to_string(height_) + " ones");
  }
  const auto pixels = image.pixels();
  for (size_t i = 0; i < pixels.size(); i += 4) {
    sum_[i] += srgb8_to_linear(pixels[i]);
    sum_[i + 1] += srgb8_to_linear(pixels[i + 1]);
    sum_[i + 2] += srgb8_to_linear(pixels[i + 2]);
    sum_[i + 3] += float(pixels[i + 3]) / 255.0f;
  }
  ++count_;
}

ImageRgba8 LinearMean::mean() const {
  if (count_ == 0) throw Error("linear mean: no image added");
  ImageRgba8 out(width_, height_);
  auto pixels = out.pixels();
  const float n = float(count_);
  for (size_t i = 0; i < pixels.size(); i += 4) {
    pixels[i] = linear_to_srgb8(sum_[i] / n);
    pixels[i + 1] = linear_to_srgb8(sum_[i + 1] / n);
    pixels[i + 2] = linear_to_srgb8(sum_[i + 2] / n);
    pixels[i + 3] = uint8_t(std::clamp(std::lround(sum_[i + 3] / n * 255.0f), 0L, 255L));
  }
  return out;
}

void LinearMean::clear() {
  width_ = height_ = 0;
  count_ = 0;
  sum_ = std::vector<float>();  // (not `= {}`: that keeps the capacity) the sums' memory goes: a live session holds a pose now and then, not all the time
}

}  // namespace tessera
