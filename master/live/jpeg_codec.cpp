#include "master/live/jpeg_codec.h"

#include <turbojpeg.h>

#include "common/base/error.h"

namespace tessera::master::live {

JpegEncoder::JpegEncoder(int quality) : handle_(tjInitCompress()), quality_(quality) {
  if (quality < 1 || quality > 100) {
    tjDestroy(handle_);
    throw Error("JPEG quality must be in 1..100");
  }
  if (!handle_) throw Error("cannot start the JPEG encoder");
}

JpegEncoder::~JpegEncoder() { tjDestroy(handle_); }

std::string JpegEncoder::encode(const ImageRgba8& image) {
  unsigned char* out = nullptr;
  unsigned long size = 0;
  // 4:2:0 chroma (what every decoder is fastest with); the accurate DCT keeps refined frames' detail.
  if (tjCompress2(handle_, image.pixels().data(), image.width(), 0, image.height(), TJPF_RGBA, &out, &size, TJSAMP_420, quality_,
                  0) != 0) {
    const std::string why = tjGetErrorStr2(handle_);
    tjFree(out);
    throw Error("JPEG encoding failed: " + why);
  }
  std::string jpeg(reinterpret_cast<const char*>(out), size);
  tjFree(out);
  return jpeg;
}

ImageRgba8 decode_jpeg(const std::string& jpeg) {
  tjhandle handle = tjInitDecompress();
  if (!handle) throw Error("cannot start the JPEG decoder");
  int width = 0, height = 0, subsampling = 0, colourspace = 0;
  auto* data = reinterpret_cast<const unsigned char*>(jpeg.data());
  if (tjDecompressHeader3(handle, data, jpeg.size(), &width, &height, &subsampling, &colourspace) != 0 || width <= 0 || height <= 0) {
    tjDestroy(handle);
    throw Error("not a JPEG image");
  }
  ImageRgba8 image;
  try {
    image = ImageRgba8(width, height);
  } catch (...) {
    tjDestroy(handle);
    throw;
  }
  const int failed = tjDecompress2(handle, data, jpeg.size(), image.pixels().data(), width, 0, height, TJPF_RGBA, 0);
  const std::string why = failed ? tjGetErrorStr2(handle) : "";
  tjDestroy(handle);
  if (failed) throw Error("JPEG decoding failed: " + why);
  return image;
}

}  // namespace tessera::master::live
