#pragma once
// JPEG for the live view (libjpeg-turbo's TurboJPEG API): RGBA8 frames in, JPEG bytes out, and
// back (the scripted client and the tests decode what the pages get). One handle per object:
// an encoder belongs to one thread at a time.
#include <string>

#include "common/image/image.h"

namespace tessera::master::live {

class JpegEncoder {
 public:
  explicit JpegEncoder(int quality);  // 1..100; throws Error outside
  ~JpegEncoder();
  JpegEncoder(const JpegEncoder&) = delete;
  JpegEncoder& operator=(const JpegEncoder&) = delete;
  std::string encode(const ImageRgba8& image);
  // Rows [y, y + rows) of `image` as a JPEG of their own (a band of a banded frame).
  std::string encode_rows(const ImageRgba8& image, int y, int rows);
  int quality() const { return quality_; }

 private:
  void* handle_;
  int quality_;
};

// Throws Error when `jpeg` does not decode.
ImageRgba8 decode_jpeg(const std::string& jpeg);
// Decodes `jpeg` into rows [y, y + rows) of `target`; throws Error when it does not decode or is
// not `target`'s width by `rows` rows, or those rows are not in `target`.
void decode_jpeg_into(const std::string& jpeg, ImageRgba8& target, int y, int rows);

}  // namespace tessera::master::live
