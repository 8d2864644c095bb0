#include "common/base/zstd_codec.h"

#include <string>
#include <zstd.h>

#include "common/base/error.h"

namespace tessera {

std::vector<uint8_t> zstd_compress(std::span<const uint8_t> raw, int level) {
  std::vector<uint8_t> out(ZSTD_compressBound(raw.size()));
  const size_t size = ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), level);
  if (ZSTD_isError(size)) throw Error(std::string("zstd compression failed: ") + ZSTD_getErrorName(size));
  out.resize(size);
  return out;
}

std::vector<uint8_t> zstd_decompress(std::span<const uint8_t> compressed, size_t expected_size) {
  const unsigned long long declared = ZSTD_getFrameContentSize(compressed.data(), compressed.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR) throw Error("not a zstd frame");
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != expected_size)
    throw Error("zstd frame holds " + std::to_string(declared) + " bytes, expected " + std::to_string(expected_size));
  std::vector<uint8_t> out(expected_size);
  const size_t size = ZSTD_decompress(out.data(), out.size(), compressed.data(), compressed.size());
  if (ZSTD_isError(size)) throw Error(std::string("zstd decompression failed: ") + ZSTD_getErrorName(size));
  if (size != expected_size)
    throw Error("zstd frame decoded to " + std::to_string(size) + " bytes, expected " + std::to_string(expected_size));
  return out;
}

std::vector<uint8_t> zstd_decompress_file(std::span<const uint8_t> compressed, size_t max_size) {
  const unsigned long long declared = ZSTD_getFrameContentSize(compressed.data(), compressed.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR) throw Error("not a zstd file");
  if (declared == ZSTD_CONTENTSIZE_UNKNOWN) throw Error("zstd file does not declare its size");
  if (declared > max_size) throw Error("zstd file decompresses to " + std::to_string(declared) + " bytes, more than allowed");
  return zstd_decompress(compressed, declared);
}

}  // namespace tessera
