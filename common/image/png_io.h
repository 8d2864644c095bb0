#pragma once
// Image files: any format stb_image decodes (PNG, JPEG, BMP, TGA, ...) in, PNG out.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "common/image/image.h"

namespace tessera {

// Decodes to RGBA8 (grey / RGB inputs get alpha 255, 16-bit inputs are reduced to 8 bits).
// Throws Error naming the file when it is missing, unreadable or not a decodable image.
ImageRgba8 read_image(const std::filesystem::path& path);
// `name` only labels error messages.
ImageRgba8 decode_image(std::span<const uint8_t> bytes, const std::string& name);

// RGBA8 PNG bytes; throws Error on an empty image.
std::vector<uint8_t> encode_png(const ImageRgba8& image);
// Encodes in memory, then writes via a temporary file and a rename, so a failure (unwritable
// folder, full disk) throws Error and never leaves a partial file at `path`.
void write_png(const std::filesystem::path& path, const ImageRgba8& image);

}  // namespace tessera
