#pragma once
// JPEG for the live view (libjpeg-turbo's TurboJPEG API): RGBA8 frames in, JPEG bytes out, and
// back (the scripted client and the tests decode what the pages get). One handle per object:
// an encoder belongs to one thread.
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
  int quality() const { return quality_; }

 private:
  void* handle_;
  int quality_;
};

// Throws Error when `jpeg` does not decode.
ImageRgba8 decode_jpeg(const std::string& jpeg);

}  // namespace tessera::master::live
