#pragma once
// 8-bit 4:2:0 pictures (I420: a full-size Y plane, then U and V at half width and height) and the
// conversion from and to the frames' sRGB RGBA8. Colour: BT.709 matrix, limited ("studio") range
// Y 16..235, U/V 16..240, the sRGB values taken as they are (no transfer conversion): the streams
// signal BT.709 primaries and matrix, the sRGB transfer (IEC 61966-2-1) where the bitstream can
// say so, limited range; a browser's VideoFrame converts back with the same matrix.
#include <cstdint>
#include <vector>

#include "common/image/image.h"

namespace tessera::video {

struct I420Image {
  int width = 0, height = 0;  // even
  std::vector<uint8_t> y, u, v;  // tightly packed: width, width / 2, width / 2 bytes a row
  I420Image() = default;
  I420Image(int width, int height);  // throws Error unless both are even and positive
  int chroma_width() const { return width / 2; }
  int chroma_height() const { return height / 2; }
};

// `image` resampled to `width` x `height` (even; the image's own size when not smaller: box
// filtered when smaller) and converted. Alpha is ignored (the RGB is what is shown).
I420Image rgba_to_i420(const ImageRgba8& image, int width, int height);
inline I420Image rgba_to_i420(const ImageRgba8& image) { return rgba_to_i420(image, image.width() & ~1, image.height() & ~1); }
// Back to RGBA8 (alpha 255), the picture's own size; chroma upsampled by nearest neighbour.
ImageRgba8 i420_to_rgba(const I420Image& picture);
// Planes with strides (a decoder's output) copied into a packed picture.
I420Image copy_planes(int width, int height, const uint8_t* y, int y_stride, const uint8_t* u, int u_stride, const uint8_t* v,
                      int v_stride);
// `picture` stretched (bilinear) over `width` x `height` RGBA8, as a page draws a picture coded
// smaller than the frame.
ImageRgba8 i420_to_rgba_stretched(const I420Image& picture, int width, int height);

}  // namespace tessera::video
