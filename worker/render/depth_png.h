#pragma once
// tessera-render --depth-out: a frame's 16-bit inverse depths (common/render/aux_outputs.h) as a
// 16-bit greyscale PNG, the very values a worker sends in TileResult.depth (white: at depth_near
// or closer, black: nothing hit).
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

namespace tessera {

struct DepthImage {
  uint32_t width = 0, height = 0;
  std::vector<uint16_t> q;  // rows top to bottom
};

std::vector<uint8_t> encode_depth_png(const DepthImage& image);
// Written as write_png writes: all or nothing (Error on failure).
void write_depth_png(const std::filesystem::path& path, const DepthImage& image);
// A 16-bit greyscale PNG back (Error when the file is not one).
DepthImage read_depth_png(const std::filesystem::path& path);

}  // namespace tessera
