#include "common/scene/texture_loader.h"

#include <algorithm>

#include "common/base/error.h"
#include "common/image/png_io.h"
#include "common/scene/mip_chain.h"

namespace tessera {

TextureImage load_texture(const std::filesystem::path& path, uint32_t max_size) {
  return make_texture(read_image(path), path.filename().string(), max_size);
}

TextureImage make_texture(const ImageRgba8& image, std::string name, uint32_t max_size) {
  TextureImage t;
  t.name = std::move(name);
  t.width = uint32_t(image.width());
  t.height = uint32_t(image.height());
  t.rgba.assign(image.pixels().begin(), image.pixels().end());
  while (max_size > 0 && (t.width > max_size || t.height > max_size)) t = half_size(t);
  return t;
}

void apply_alpha_mask(TextureImage& texture, const TextureImage& mask) {
  for (uint32_t y = 0; y < texture.height; ++y)
    for (uint32_t x = 0; x < texture.width; ++x) {
      const uint32_t mx = uint32_t(uint64_t(x) * mask.width / texture.width);
      const uint32_t my = uint32_t(uint64_t(y) * mask.height / texture.height);
      const uint8_t* m = &mask.rgba[(size_t(my) * mask.width + mx) * 4];
      texture.rgba[(size_t(y) * texture.width + x) * 4 + 3] = uint8_t((m[0] * 54u + m[1] * 183u + m[2] * 19u) / 256u);
    }
  texture.has_alpha_mask = true;
}

}  // namespace tessera
