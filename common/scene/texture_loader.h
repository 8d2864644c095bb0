#pragma once
// Decodes a texture image (JPEG, PNG, ...) for packing, halving it until it fits max_size.
#include <filesystem>

#include "common/image/image.h"
#include "common/scene/triangle_mesh.h"

namespace tessera {

TextureImage load_texture(const std::filesystem::path& path, uint32_t max_size);

// The same for an image decoded already (e.g. one embedded in a glTF file).
TextureImage make_texture(const ImageRgba8& image, std::string name, uint32_t max_size);

// Writes the luminance of `mask` (resampled to the texture's size) into the texture's alpha.
void apply_alpha_mask(TextureImage& texture, const TextureImage& mask);

}  // namespace tessera
