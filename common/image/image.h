#pragma once
// In-memory images: 8-bit sRGB RGBA (what tiles, frames and PNGs hold) and linear float RGB
// (what renderers accumulate), the exact sRGB transfer function between them, and tile
// compositing.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tessera {

struct Rgba8 {
  uint8_t r = 0, g = 0, b = 0, a = 255;
  friend bool operator==(const Rgba8&, const Rgba8&) = default;
};

// Row-major, tightly packed RGBA8 (4 bytes a pixel, no row padding). sRGB-encoded colour,
// straight (not premultiplied) alpha.
class ImageRgba8 {
 public:
  static constexpr int kChannels = 4;
  // Guards against absurd sizes from corrupt headers or requests: 2^28 pixels = 1 GiB.
  static constexpr int64_t kMaxPixels = int64_t{1} << 28;

  ImageRgba8() = default;
  // Filled with `fill`. Throws Error on negative or too large sizes.
  ImageRgba8(int width, int height, Rgba8 fill = {});
  // Takes ownership of `rgba` (width * height * 4 bytes, else Error). A named function, not a
  // constructor, so ImageRgba8(w, h, {r, g, b, a}) stays unambiguous.
  static ImageRgba8 from_rgba(int width, int height, std::vector<uint8_t> rgba);

  int width() const noexcept { return width_; }
  int height() const noexcept { return height_; }
  bool empty() const noexcept { return width_ == 0 || height_ == 0; }
  size_t pixel_count() const noexcept { return size_t(width_) * size_t(height_); }

  std::span<uint8_t> pixels() noexcept { return pixels_; }
  std::span<const uint8_t> pixels() const noexcept { return pixels_; }
  // Unchecked: callers stay inside the image.
  uint8_t* row(int y) noexcept { return pixels_.data() + size_t(y) * size_t(width_) * kChannels; }
  const uint8_t* row(int y) const noexcept { return pixels_.data() + size_t(y) * size_t(width_) * kChannels; }
  Rgba8 at(int x, int y) const noexcept;
  void set(int x, int y, Rgba8 colour) noexcept;

  friend bool operator==(const ImageRgba8&, const ImageRgba8&) = default;

 private:
  int width_ = 0;
  int height_ = 0;
  std::vector<uint8_t> pixels_;
};

// Row-major linear-light RGB, 3 floats a pixel.
struct ImageRgbF {
  int width = 0;
  int height = 0;
  std::vector<float> rgb;

  ImageRgbF() = default;
  ImageRgbF(int width, int height);  // zero-filled; throws Error on bad sizes
  float* pixel(int x, int y) noexcept { return rgb.data() + (size_t(y) * size_t(width) + size_t(x)) * 3; }
  const float* pixel(int x, int y) const noexcept {
    return rgb.data() + (size_t(y) * size_t(width) + size_t(x)) * 3;
  }
};

// Exact IEC 61966-2-1 sRGB transfer function on [0, 1] (inputs are clamped; NaN maps to 0).
double srgb_to_linear(double encoded);
double linear_to_srgb(double linear);
// 8-bit helpers: a table lookup, and rounding to the nearest code with clamping.
// linear_to_srgb8(srgb8_to_linear(v)) == v for every v.
float srgb8_to_linear(uint8_t encoded);
uint8_t linear_to_srgb8(float linear);

// Whole-image conversions; alpha becomes 255 on the way to RGBA8 and is dropped the other way.
ImageRgbF to_linear(const ImageRgba8& image);
ImageRgba8 to_srgb8(const ImageRgbF& image);

// Copies a w x h block of tightly packed RGBA8 pixels into `frame` with its top-left corner at
// (x0, y0). Throws Error (frame untouched) if the block does not lie wholly inside the frame or
// `rgba` is not w * h * 4 bytes.
void composite_tile(ImageRgba8& frame, int x0, int y0, int w, int h, std::span<const uint8_t> rgba);
void composite_tile(ImageRgba8& frame, int x0, int y0, const ImageRgba8& tile);
// The w x h block at (x0, y0); throws Error if it does not lie inside `image`.
ImageRgba8 extract_tile(const ImageRgba8& image, int x0, int y0, int w, int h);

}  // namespace tessera
