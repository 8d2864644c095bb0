#include "worker/render/depth_png.h"

#include <array>
#include <climits>
#include <cstdlib>
#include <memory>
#include <string>

#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#include "common/base/error.h"
#include "common/base/file_io.h"

// stb_image_write's deflate, which the library exports but its header declares only in its
// implementation part.
STBIWDEF unsigned char* stbi_zlib_compress(unsigned char* data, int data_len, int* out_len, int quality);

namespace tessera {
namespace {

// The PNG chunk checksum (CRC-32, polynomial 0xEDB88320).
uint32_t crc32(std::span<const uint8_t> bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (uint8_t b : bytes) c = table[(c ^ b) & 0xFFu] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(uint8_t(v >> shift));
}

void put_chunk(std::vector<uint8_t>& out, const char type[4], std::span<const uint8_t> data) {
  put_u32(out, uint32_t(data.size()));
  const size_t start = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  put_u32(out, crc32({out.data() + start, out.size() - start}));
}

}  // namespace

std::vector<uint8_t> encode_depth_png(const DepthImage& image) {
  if (image.width == 0 || image.height == 0 || image.q.size() != size_t(image.width) * image.height)
    throw Error("cannot write a depth image of " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                " pixels from " + std::to_string(image.q.size()) + " values");
  // Rows each behind filter byte 0 (none), samples big-endian, as PNG stores 16-bit samples.
  std::vector<uint8_t> raw;
  raw.reserve(size_t(image.height) * (1 + 2 * size_t(image.width)));
  for (uint32_t y = 0; y < image.height; ++y) {
    raw.push_back(0);
    for (uint32_t x = 0; x < image.width; ++x) {
      const uint16_t q = image.q[size_t(y) * image.width + x];
      raw.push_back(uint8_t(q >> 8));
      raw.push_back(uint8_t(q & 0xFFu));
    }
  }
  if (raw.size() > size_t(INT_MAX)) throw Error("depth image too large for PNG");
  int zlib_size = 0;
  std::unique_ptr<unsigned char, void (*)(void*)> zlib(stbi_zlib_compress(raw.data(), int(raw.size()), &zlib_size, 6),
                                                       std::free);
  if (!zlib) throw Error("PNG encoding failed");
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::vector<uint8_t> header;
  put_u32(header, image.width);
  put_u32(header, image.height);
  header.insert(header.end(), {16, 0, 0, 0, 0});  // 16 bits, greyscale, deflate, adaptive filters, no interlace
  put_chunk(png, "IHDR", header);
  put_chunk(png, "IDAT", {zlib.get(), size_t(zlib_size)});
  put_chunk(png, "IEND", {});
  return png;
}

void write_depth_png(const std::filesystem::path& path, const DepthImage& image) {
  const std::vector<uint8_t> png = encode_depth_png(image);
  write_file_atomically(path, png.data(), png.size());
}

DepthImage read_depth_png(const std::filesystem::path& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  if (bytes.empty() || bytes.size() > size_t(INT_MAX)) throw Error("'" + path.string() + "' is not a depth PNG");
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  int width = 0, height = 0, channels = 0;
  if (!stbi_info_from_memory(data, int(bytes.size()), &width, &height, &channels) ||
      !stbi_is_16_bit_from_memory(data, int(bytes.size())) || channels != 1)
    throw Error("'" + path.string() + "' is not a 16-bit greyscale PNG");
  std::unique_ptr<stbi_us, void (*)(void*)> pixels(
      stbi_load_16_from_memory(data, int(bytes.size()), &width, &height, &channels, 1), stbi_image_free);
  if (!pixels) throw Error("cannot decode '" + path.string() + "'");
  DepthImage image;
  image.width = uint32_t(width);
  image.height = uint32_t(height);
  image.q.assign(pixels.get(), pixels.get() + size_t(width) * size_t(height));
  return image;
}

}  // namespace tessera
