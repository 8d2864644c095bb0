#include "common/base/zstd_codec.h"

#include <algorithm>
#include <memory>
#include <string>
#include <zstd.h>

#include "common/base/error.h"

namespace tessera {
namespace {

// Up to this size an output buffer is allocated whole up front; above, it grows as frames decode.
constexpr size_t kDirectDecodeBytes = 16u << 20;

}  // namespace

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
  if (declared == expected_size && expected_size <= kDirectDecodeBytes) {
    // Small and announced (tiles on the wire): one call into a buffer of the final size.
    std::vector<uint8_t> out(expected_size);
    const size_t size = ZSTD_decompress(out.data(), out.size(), compressed.data(), compressed.size());
    if (ZSTD_isError(size)) throw Error(std::string("zstd decompression failed: ") + ZSTD_getErrorName(size));
    if (size != expected_size)
      throw Error("zstd frame decoded to " + std::to_string(size) + " bytes, expected " + std::to_string(expected_size));
    return out;
  }
  // Streaming: the output grows with what the frame really decodes to, so a frame that claims
  // (or a caller that expects) gigabytes costs memory only for the bytes actually produced.
  std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> stream(ZSTD_createDStream(), ZSTD_freeDStream);
  if (!stream) throw Error("zstd: out of memory");
  std::vector<uint8_t> out;
  out.reserve(std::min(expected_size, std::max<size_t>(compressed.size() * 4, 1 << 20)));
  std::vector<uint8_t> buffer(ZSTD_DStreamOutSize());
  ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
  size_t status;
  do {
    ZSTD_outBuffer dst{buffer.data(), buffer.size(), 0};
    const size_t consumed = in.pos;
    status = ZSTD_decompressStream(stream.get(), &dst, &in);
    if (ZSTD_isError(status)) throw Error(std::string("zstd decompression failed: ") + ZSTD_getErrorName(status));
    if (dst.pos > expected_size - out.size())
      throw Error("zstd frame decodes to more than the expected " + std::to_string(expected_size) + " bytes");
    if (out.size() + dst.pos > out.capacity())  // doubling, but never past the expected size
      out.reserve(std::min(expected_size, std::max(2 * out.capacity(), out.size() + dst.pos)));
    out.insert(out.end(), buffer.begin(), buffer.begin() + dst.pos);
    if (status != 0 && dst.pos == 0 && in.pos == consumed) throw Error("zstd frame is truncated");
  } while (status != 0);
  if (in.pos != in.size) throw Error("bytes after the zstd frame");
  if (out.size() != expected_size)
    throw Error("zstd frame decoded to " + std::to_string(out.size()) + " bytes, expected " + std::to_string(expected_size));
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
