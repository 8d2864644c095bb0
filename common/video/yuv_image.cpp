#include "common/video/yuv_image.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/base/error.h"
#include "common/base/parallel_for.h"

namespace tessera::video {
namespace {

// BT.709 limited range in 16.16 fixed point: Y = 16 + 219/255 (Kr R + Kg G + Kb B), and the colour
// differences scaled to 224/255 of their span around 128.
constexpr double kKr = 0.2126, kKb = 0.0722, kKg = 1 - kKr - kKb;
constexpr double kYScale = 219.0 / 255.0, kCScale = 224.0 / 255.0;
constexpr int fixed(double x) { return int(x * 65536 + (x >= 0 ? 0.5 : -0.5)); }
constexpr int kYR = fixed(kYScale * kKr), kYG = fixed(kYScale * kKg), kYB = fixed(kYScale * kKb);
constexpr double kCb = kCScale / (2 * (1 - kKb)), kCr = kCScale / (2 * (1 - kKr));
constexpr int kUR = fixed(-kCb * kKr), kUG = fixed(-kCb * kKg), kUB = fixed(kCb * (1 - kKb));
constexpr int kVR = fixed(kCr * (1 - kKr)), kVG = fixed(-kCr * kKg), kVB = fixed(-kCr * kKb);
constexpr int kHalf = 1 << 15;

uint8_t clamp8(int v) { return uint8_t(std::clamp(v, 0, 255)); }

// Bilinear resampling (pixel centres aligned); at half size each output pixel is the mean of 2x2.
ImageRgba8 resample(const ImageRgba8& image, int width, int height) {
  ImageRgba8 out(width, height);
  const double sx = double(image.width()) / width, sy = double(image.height()) / height;
  for (int y = 0; y < height; ++y) {
    const double fy = std::clamp((y + 0.5) * sy - 0.5, 0.0, double(image.height() - 1));
    const int y0 = int(fy), y1 = std::min(y0 + 1, image.height() - 1);
    const double wy = fy - y0;
    uint8_t* o = out.row(y);
    for (int x = 0; x < width; ++x) {
      const double fx = std::clamp((x + 0.5) * sx - 0.5, 0.0, double(image.width() - 1));
      const int x0 = int(fx), x1 = std::min(x0 + 1, image.width() - 1);
      const double wx = fx - x0;
      for (int c = 0; c < 4; ++c) {
        const double top = image.row(y0)[x0 * 4 + c] * (1 - wx) + image.row(y0)[x1 * 4 + c] * wx;
        const double bottom = image.row(y1)[x0 * 4 + c] * (1 - wx) + image.row(y1)[x1 * 4 + c] * wx;
        o[x * 4 + c] = uint8_t(std::lround(top * (1 - wy) + bottom * wy));
      }
    }
  }
  return out;
}

}  // namespace

I420Image::I420Image(int w, int h) : width(w), height(h) {
  if (w <= 0 || h <= 0 || w % 2 || h % 2) throw Error("a 4:2:0 picture needs an even, positive size, not " + std::to_string(w) + "x" + std::to_string(h));
  y.resize(size_t(w) * size_t(h));
  u.resize(size_t(w / 2) * size_t(h / 2));
  v.resize(u.size());
}

I420Image rgba_to_i420(const ImageRgba8& image, int width, int height) {
  if (image.width() < 2 || image.height() < 2) throw Error("a video frame needs at least 2x2 pixels");
  I420Image out(width, height);
  // Within a pixel of the image's size: its top-left part as it is (an odd side loses its last row
  // or column); otherwise resampled.
  const bool crop = width <= image.width() && height <= image.height() && image.width() - width <= 1 && image.height() - height <= 1;
  const ImageRgba8 resampled = crop ? ImageRgba8() : resample(image, width, height);
  const ImageRgba8& source = crop ? image : resampled;
  // Rows in parallel: a stereo 2x1024^2 frame is 2 M pixels, on the frame's way to the page.
  parallel_for_chunks(size_t(height / 2), 32, [&](size_t first, size_t last) {
  for (int cy = int(first); cy < int(last); ++cy) {
    const uint8_t* rows[2] = {source.row(2 * cy), source.row(2 * cy + 1)};
    uint8_t* yrows[2] = {&out.y[size_t(2 * cy) * size_t(width)], &out.y[size_t(2 * cy + 1) * size_t(width)]};
    uint8_t* urow = &out.u[size_t(cy) * size_t(width / 2)];
    uint8_t* vrow = &out.v[size_t(cy) * size_t(width / 2)];
    for (int cx = 0; cx < width / 2; ++cx) {
      int r = 0, g = 0, b = 0;
      for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx) {
          const uint8_t* p = rows[dy] + (2 * cx + dx) * 4;
          yrows[dy][2 * cx + dx] = uint8_t(16 + ((kYR * p[0] + kYG * p[1] + kYB * p[2] + kHalf) >> 16));
          r += p[0];
          g += p[1];
          b += p[2];
        }
      // The 2x2 mean of RGB (sums are 4x), then its colour differences.
      urow[cx] = clamp8(128 + ((kUR * r + kUG * g + kUB * b + 4 * kHalf) >> 18));
      vrow[cx] = clamp8(128 + ((kVR * r + kVG * g + kVB * b + 4 * kHalf) >> 18));
    }
  }
  });
  return out;
}

ImageRgba8 i420_to_rgba(const I420Image& p) {
  ImageRgba8 out(p.width, p.height);
  // Inverse of the above: Y' = (Y - 16) 255/219, R = Y' + 2(1-Kr) Cr', B = Y' + 2(1-Kb) Cb'.
  constexpr double kY = 255.0 / 219.0, kC = 255.0 / 224.0;
  constexpr int kRV = fixed(kC * 2 * (1 - kKr)), kBU = fixed(kC * 2 * (1 - kKb));
  constexpr int kGU = fixed(-kC * 2 * (1 - kKb) * kKb / kKg), kGV = fixed(-kC * 2 * (1 - kKr) * kKr / kKg), kYY = fixed(kY);
  for (int y = 0; y < p.height; ++y) {
    uint8_t* o = out.row(y);
    const uint8_t* yrow = &p.y[size_t(y) * size_t(p.width)];
    const uint8_t* urow = &p.u[size_t(y / 2) * size_t(p.width / 2)];
    const uint8_t* vrow = &p.v[size_t(y / 2) * size_t(p.width / 2)];
    for (int x = 0; x < p.width; ++x) {
      const int yy = kYY * (yrow[x] - 16) + kHalf, u = urow[x / 2] - 128, v = vrow[x / 2] - 128;
      o[x * 4 + 0] = clamp8((yy + kRV * v) >> 16);
      o[x * 4 + 1] = clamp8((yy + kGU * u + kGV * v) >> 16);
      o[x * 4 + 2] = clamp8((yy + kBU * u) >> 16);
      o[x * 4 + 3] = 255;
    }
  }
  return out;
}

I420Image copy_planes(int width, int height, const uint8_t* y, int y_stride, const uint8_t* u, int u_stride, const uint8_t* v,
                      int v_stride) {
  I420Image out(width, height);
  for (int row = 0; row < height; ++row) std::memcpy(&out.y[size_t(row) * size_t(width)], y + ptrdiff_t(row) * y_stride, size_t(width));
  for (int row = 0; row < height / 2; ++row) {
    std::memcpy(&out.u[size_t(row) * size_t(width / 2)], u + ptrdiff_t(row) * u_stride, size_t(width / 2));
    std::memcpy(&out.v[size_t(row) * size_t(width / 2)], v + ptrdiff_t(row) * v_stride, size_t(width / 2));
  }
  return out;
}

ImageRgba8 i420_to_rgba_stretched(const I420Image& picture, int width, int height) {
  ImageRgba8 rgba = i420_to_rgba(picture);
  if (rgba.width() == width && rgba.height() == height) return rgba;
  return resample(rgba, width, height);
}

}  // namespace tessera::video
