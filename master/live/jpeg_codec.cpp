#include "master/live/jpeg_codec.h"

#include <turbojpeg.h>

#include "common/base/error.h"

namespace tessera::master::live {
namespace {

struct Decompressor {
  tjhandle handle = tjInitDecompress();
  Decompressor() {
    if (!handle) throw Error("cannot start the JPEG decoder");
  }
  ~Decompressor() { tjDestroy(handle); }
};

// The JPEG's size; throws Error when its header does not read.
std::pair<int, int> jpeg_size(tjhandle handle, const std::string& jpeg) {
  int width = 0, height = 0, subsampling = 0, colourspace = 0;
  if (tjDecompressHeader3(handle, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size(), &width, &height, &subsampling,
                          &colourspace) != 0 ||
      width <= 0 || height <= 0)
    throw Error("not a JPEG image");
  return {width, height};
}

void decompress(tjhandle handle, const std::string& jpeg, uint8_t* rgba, int width, int height) {
  if (tjDecompress2(handle, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size(), rgba, width, 0, height, TJPF_RGBA, 0) != 0)
    throw Error(std::string("JPEG decoding failed: ") + tjGetErrorStr2(handle));
}

}  // namespace

JpegEncoder::JpegEncoder(int quality) : handle_(tjInitCompress()), quality_(quality) {
  if (quality < 1 || quality > 100) {
    tjDestroy(handle_);
    throw Error("JPEG quality must be in 1..100");
  }
  if (!handle_) throw Error("cannot start the JPEG encoder");
}

JpegEncoder::~JpegEncoder() { tjDestroy(handle_); }

std::string JpegEncoder::encode(const ImageRgba8& image) { return encode_rows(image, 0, image.height()); }

std::string JpegEncoder::encode_rows(const ImageRgba8& image, int y, int rows) {
  if (y < 0 || rows <= 0 || y + rows > image.height()) throw Error("JPEG band outside the image");
  unsigned char* out = nullptr;
  unsigned long size = 0;
  // 4:2:0 chroma (what every decoder is fastest with); the accurate DCT keeps refined frames' detail.
  if (tjCompress2(handle_, image.row(y), image.width(), 0, rows, TJPF_RGBA, &out, &size, TJSAMP_420, quality_, 0) != 0) {
    const std::string why = tjGetErrorStr2(handle_);
    tjFree(out);
    throw Error("JPEG encoding failed: " + why);
  }
  std::string jpeg(reinterpret_cast<const char*>(out), size);
  tjFree(out);
  return jpeg;
}

ImageRgba8 decode_jpeg(const std::string& jpeg) {
  Decompressor d;
  const auto [width, height] = jpeg_size(d.handle, jpeg);
  ImageRgba8 image(width, height);
  decompress(d.handle, jpeg, image.pixels().data(), width, height);
  return image;
}

void decode_jpeg_into(const std::string& jpeg, ImageRgba8& target, int y, int rows) {
  Decompressor d;
  const auto [width, height] = jpeg_size(d.handle, jpeg);
  if (width != target.width() || height != rows || y < 0 || y + height > target.height())
    throw Error("a JPEG band of " + std::to_string(width) + "x" + std::to_string(height) + " at row " + std::to_string(y) +
                " is not the " + std::to_string(target.width()) + "x" + std::to_string(rows) + " band there of a " + std::to_string(target.width()) +
                "x" + std::to_string(target.height()) + " frame");
  decompress(d.handle, jpeg, target.row(y), width, height);
}

}  // namespace tessera::master::live
