#include "common/image/png_io.h"

#include <climits>
#include <cstring>
#include <memory>

#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#include "common/base/error.h"
#include "common/base/file_io.h"

namespace tessera {
namespace {

void append_bytes(void* context, void* data, int size) {
  auto* out = static_cast<std::vector<uint8_t>*>(context);
  const auto* bytes = static_cast<const uint8_t*>(data);
  out->insert(out->end(), bytes, bytes + size);
}

std::string failure_reason() {
  const char* reason = stbi_failure_reason();
  return reason ? reason : "unknown reason";
}

}  // namespace

ImageRgba8 decode_image(std::span<const uint8_t> bytes, const std::string& name) {
  if (bytes.empty()) throw Error("'" + name + "' is empty, not an image");
  if (bytes.size() > size_t(INT_MAX)) throw Error("'" + name + "' is too large to decode");
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int length = static_cast<int>(bytes.size());
  int width = 0, height = 0, channels = 0;
  // Check the header first so a corrupt or hostile size never reaches the allocator.
  if (!stbi_info_from_memory(data, length, &width, &height, &channels))
    throw Error("'" + name + "' is not an image (" + failure_reason() + ")");
  if (width <= 0 || height <= 0 || int64_t(width) * height > ImageRgba8::kMaxPixels)
    throw Error("'" + name + "' has an unsupported size " + std::to_string(width) + "x" + std::to_string(height));
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_memory(data, length, &width, &height, &channels, ImageRgba8::kChannels), stbi_image_free);
  if (!pixels) throw Error("cannot decode '" + name + "': " + failure_reason());
  const size_t size = size_t(width) * size_t(height) * ImageRgba8::kChannels;
  return ImageRgba8::from_rgba(width, height, std::vector<uint8_t>(pixels.get(), pixels.get() + size));
}

ImageRgba8 read_image(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error("'" + path.string() + "' is a folder, not an image");
  return decode_image(read_file_bytes(path), path.string());
}

std::vector<uint8_t> encode_png(const ImageRgba8& image) {
  if (image.empty()) throw Error("cannot write an empty " + std::to_string(image.width()) + "x" +
                                 std::to_string(image.height()) + " image as PNG");
  std::vector<uint8_t> png;
  if (!stbi_write_png_to_func(append_bytes, &png, image.width(), image.height(), ImageRgba8::kChannels,
                              image.pixels().data(), image.width() * ImageRgba8::kChannels))
    throw Error("PNG encoding failed");
  return png;
}

void write_png(const std::filesystem::path& path, const ImageRgba8& image) {
  const std::vector<uint8_t> png = encode_png(image);
  write_file_atomically(path, png.data(), png.size());
}

}  // namespace tessera
