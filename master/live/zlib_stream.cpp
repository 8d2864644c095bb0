#include "master/live/zlib_stream.h"

#include <zlib.h>

#include "common/base/error.h"

namespace tessera::master::live {

std::string zlib_compress(std::span<const uint8_t> raw, int level) {
  uLongf size = compressBound(uLong(raw.size()));
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size, raw.data(), uLong(raw.size()), level) != Z_OK)
    throw Error("zlib could not compress " + std::to_string(raw.size()) + " bytes");
  out.resize(size);
  return out;
}

std::string zlib_decompress(const std::string& stream, size_t expected_size) {
  std::string out(expected_size + 1, '\0');  // one byte more: a longer stream does not fit exactly
  uLongf size = uLongf(out.size());
  uLong used = uLong(stream.size());
  const int status = uncompress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(stream.data()), &used);
  if (status != Z_OK || size != expected_size || used != stream.size())
    throw Error("a zlib stream that is not " + std::to_string(expected_size) + " bytes (zlib status " + std::to_string(status) + ")");
  out.resize(size);
  return out;
}

}  // namespace tessera::master::live
