#include "common/image/image.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "common/base/error.h"
#include "common/image/srgb_thresholds.h"

namespace tessera {
namespace {

std::string size_text(int64_t w, int64_t h) { return std::to_string(w) + "x" + std::to_string(h); }

void check_size(int width, int height) {
  if (width < 0 || height < 0) throw Error("invalid image size " + size_text(width, height));
  if (int64_t(width) * int64_t(height) > ImageRgba8::kMaxPixels)
    throw Error("image size " + size_text(width, height) + " is too large");
}

// Rectangle test in 64 bits so huge offsets cannot wrap around.
void check_inside(int frame_w, int frame_h, int x0, int y0, int w, int h) {
  if (w < 0 || h < 0 || x0 < 0 || y0 < 0 || int64_t(x0) + w > frame_w || int64_t(y0) + h > frame_h)
    throw Error("tile " + size_text(w, h) + " at (" + std::to_string(x0) + ", " + std::to_string(y0) +
                ") does not fit in a " + size_text(frame_w, frame_h) + " image");
}

const std::array<float, 256>& srgb8_table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int i = 0; i < 256; ++i) t[size_t(i)] = float(srgb_to_linear(i / 255.0));
    return t;
  }();
  return table;
}

}  // namespace

ImageRgba8::ImageRgba8(int width, int height, Rgba8 fill) : width_(width), height_(height) {
  check_size(width, height);
  pixels_.resize(pixel_count() * kChannels);
  for (size_t i = 0; i < pixels_.size(); i += kChannels) {
    pixels_[i] = fill.r;
    pixels_[i + 1] = fill.g;
    pixels_[i + 2] = fill.b;
    pixels_[i + 3] = fill.a;
  }
}

ImageRgba8 ImageRgba8::from_rgba(int width, int height, std::vector<uint8_t> rgba) {
  check_size(width, height);
  const size_t needed = size_t(width) * size_t(height) * kChannels;
  if (rgba.size() != needed)
    throw Error("RGBA8 image " + size_text(width, height) + " needs " + std::to_string(needed) + " bytes, got " +
                std::to_string(rgba.size()));
  ImageRgba8 image;
  image.width_ = width;
  image.height_ = height;
  image.pixels_ = std::move(rgba);
  return image;
}

Rgba8 ImageRgba8::at(int x, int y) const noexcept {
  const uint8_t* p = row(y) + size_t(x) * kChannels;
  return {p[0], p[1], p[2], p[3]};
}

void ImageRgba8::set(int x, int y, Rgba8 colour) noexcept {
  uint8_t* p = row(y) + size_t(x) * kChannels;
  p[0] = colour.r;
  p[1] = colour.g;
  p[2] = colour.b;
  p[3] = colour.a;
}

ImageRgbF::ImageRgbF(int w, int h) : width(w), height(h) {
  check_size(w, h);
  rgb.assign(size_t(w) * size_t(h) * 3, 0.0f);
}

double srgb_to_linear(double c) {
  if (!(c > 0.0)) return 0.0;  // also catches NaN
  if (c >= 1.0) return 1.0;
  return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}

double linear_to_srgb(double l) {
  if (!(l > 0.0)) return 0.0;
  if (l >= 1.0) return 1.0;
  return l <= 0.0031308 ? l * 12.92 : 1.055 * std::pow(l, 1.0 / 2.4) - 0.055;
}

float srgb8_to_linear(uint8_t encoded) { return srgb8_table()[encoded]; }

uint8_t linear_to_srgb8(float linear) {
  if (!(linear > 0.0f)) return 0;  // also NaN
  const auto& t = linear_to_srgb8_thresholds();
  return static_cast<uint8_t>(std::upper_bound(t.begin(), t.end(), linear) - t.begin());
}

ImageRgbF to_linear(const ImageRgba8& image) {
  ImageRgbF out(image.width(), image.height());
  const auto src = image.pixels();
  for (size_t i = 0, n = image.pixel_count(); i < n; ++i)
    for (size_t c = 0; c < 3; ++c) out.rgb[i * 3 + c] = srgb8_to_linear(src[i * 4 + c]);
  return out;
}

ImageRgba8 to_srgb8(const ImageRgbF& image) {
  if (image.rgb.size() != size_t(image.width) * size_t(image.height) * 3)
    throw Error("float RGB image " + size_text(image.width, image.height) + " has " +
                std::to_string(image.rgb.size()) + " values");
  ImageRgba8 out(image.width, image.height);
  auto dst = out.pixels();
  for (size_t i = 0, n = out.pixel_count(); i < n; ++i)
    for (size_t c = 0; c < 3; ++c) dst[i * 4 + c] = linear_to_srgb8(image.rgb[i * 3 + c]);
  return out;
}

void composite_tile(ImageRgba8& frame, int x0, int y0, int w, int h, std::span<const uint8_t> rgba) {
  check_inside(frame.width(), frame.height(), x0, y0, w, h);
  const size_t row_bytes = size_t(w) * ImageRgba8::kChannels;
  if (rgba.size() != row_bytes * size_t(h))
    throw Error("tile " + size_text(w, h) + " needs " + std::to_string(row_bytes * size_t(h)) +
                " bytes of RGBA8, got " + std::to_string(rgba.size()));
  if (row_bytes == 0) return;
  for (int y = 0; y < h; ++y)
    std::memcpy(frame.row(y0 + y) + size_t(x0) * ImageRgba8::kChannels, rgba.data() + size_t(y) * row_bytes,
                row_bytes);
}

void composite_tile(ImageRgba8& frame, int x0, int y0, const ImageRgba8& tile) {
  composite_tile(frame, x0, y0, tile.width(), tile.height(), tile.pixels());
}

ImageRgba8 extract_tile(const ImageRgba8& image, int x0, int y0, int w, int h) {
  check_inside(image.width(), image.height(), x0, y0, w, h);
  ImageRgba8 tile(w, h);
  const size_t row_bytes = size_t(w) * ImageRgba8::kChannels;
  if (row_bytes == 0) return tile;
  for (int y = 0; y < h; ++y)
    std::memcpy(tile.row(y), image.row(y0 + y) + size_t(x0) * ImageRgba8::kChannels, row_bytes);
  return tile;
}

}  // namespace tessera
