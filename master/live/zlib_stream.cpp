#include "master/live/zlib_stream.h"

#include <zlib.h>

#include <algorithm>
#include <future>
#include <vector>

#include "common/base/error.h"

namespace tessera::master::live {
namespace {

constexpr size_t kMinPiece = 256 * 1024;  // smaller pieces cost more in threads than they save

// Raw deflate of one piece: the last ends the stream (final block), the others end on a byte
// boundary (sync flush), so the pieces concatenate into one deflate stream.
std::string deflate_piece(std::span<const uint8_t> raw, int level, bool last) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw Error("zlib could not start deflating");
  std::string out(deflateBound(&z, uLong(raw.size())) + 16, '\0');
  z.next_in = const_cast<Bytef*>(raw.data());
  z.avail_in = uInt(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  const int status = deflate(&z, last ? Z_FINISH : Z_SYNC_FLUSH);
  const bool done = last ? status == Z_STREAM_END : status == Z_OK && z.avail_in == 0;
  out.resize(z.total_out);
  deflateEnd(&z);
  if (!done) throw Error("zlib could not compress " + std::to_string(raw.size()) + " bytes");
  return out;
}

}  // namespace

std::string zlib_compress(std::span<const uint8_t> raw, int level, unsigned threads) {
  const size_t pieces = std::clamp<size_t>(raw.size() / kMinPiece, 1, std::max(1u, threads));
  const size_t step = (raw.size() + pieces - 1) / pieces;
  std::vector<std::future<std::string>> parts;
  for (size_t i = 0; i < pieces; ++i) {
    const size_t begin = std::min(raw.size(), i * step), end = std::min(raw.size(), begin + step);
    const auto piece = raw.subspan(begin, end - begin);
    const bool last = i + 1 == pieces;
    parts.push_back(std::async(pieces > 1 ? std::launch::async : std::launch::deferred,
                               [piece, level, last] { return deflate_piece(piece, level, last); }));
  }
  // zlib's header (deflate, 32 KiB window, no dictionary; check bits), the pieces, the Adler-32 of all.
  std::string out = {char(0x78), char(0x01)};
  for (auto& part : parts) out += part.get();
  const uLong adler = adler32_z(adler32(0, nullptr, 0), raw.data(), raw.size());
  for (int shift = 24; shift >= 0; shift -= 8) out += char((adler >> shift) & 0xff);
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
