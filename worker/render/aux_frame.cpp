#include "worker/render/aux_frame.h"

#include <algorithm>
#include <cstring>

#include "common/base/error.h"

namespace tessera {

std::vector<uint32_t> render_aux_frame(TileRenderer& renderer, const std::vector<CameraParams>& eyes,
                                       const RenderSettings& settings, const AuxSettings& aux, uint32_t tile_size) {
  if (eyes.empty() || eyes.size() > 2) throw Error("the aux pass takes one or two eyes");
  const uint32_t width = eyes[0].width, height = eyes[0].height, stride = width * uint32_t(eyes.size());
  // Every eye's tiles in one batch (one launch on OpenCL devices), then moved to their place.
  std::vector<BatchTile> tiles;
  uint64_t offset = 0;
  for (uint32_t eye = 0; eye < eyes.size(); ++eye)
    for (uint32_t y = 0; y < height; y += tile_size)
      for (uint32_t x = 0; x < width; x += tile_size) {
        const TileRect rect{x, y, std::min(tile_size, width - x), std::min(tile_size, height - y)};
        tiles.push_back({rect, eye, offset});
        offset += uint64_t(rect.width) * rect.height;
      }
  std::vector<uint32_t> batch(offset);
  const std::array<CameraParams, 2> cameras{eyes[0], eyes.size() > 1 ? eyes[1] : eyes[0]};
  renderer.render_aux_batch(cameras, settings, aux, tiles, batch, {});
  std::vector<uint32_t> frame(size_t(stride) * height);
  for (const BatchTile& tile : tiles)
    for (uint32_t y = 0; y < tile.rect.height; ++y)
      std::memcpy(&frame[size_t(tile.rect.y0 + y) * stride + tile.eye * width + tile.rect.x0],
                  &batch[tile.offset + size_t(y) * tile.rect.width], tile.rect.width * sizeof(uint32_t));
  return frame;
}

void make_transparent(ImageRgba8& frame, std::span<const uint32_t> aux) {
  if (aux.size() != frame.pixel_count()) throw Error("transparency: the aux pass does not cover the frame");
  auto bytes = frame.pixels();
  for (size_t i = 0; i < aux.size(); ++i) {
    uint32_t word;
    std::memcpy(&word, &bytes[4 * i], 4);
    word = transparent_pixel(word, aux[i]);
    std::memcpy(&bytes[4 * i], &word, 4);
  }
}

DepthImage inverse_depth_image(std::span<const uint32_t> aux, uint32_t width, uint32_t height) {
  if (aux.size() != size_t(width) * height) throw Error("depth: the aux pass does not cover the frame");
  DepthImage image{width, height, std::vector<uint16_t>(aux.size())};
  for (size_t i = 0; i < aux.size(); ++i) image.q[i] = aux_inverse_depth_of(aux[i]);
  return image;
}

void check_photo_size(const ImageRgba8& photo, int width, int height) {
  if (photo.width() != width || photo.height() != height)
    throw Error("the photograph is " + std::to_string(photo.width()) + "x" + std::to_string(photo.height()) +
                " but the render is " + std::to_string(width) + "x" + std::to_string(height) +
                " (render at the photograph's size with --size)");
}

ImageRgba8 composite_over(const ImageRgba8& transparent, const ImageRgba8& photo) {
  check_photo_size(photo, transparent.width(), transparent.height());
  ImageRgba8 out = photo;
  const auto src = transparent.pixels();
  auto dst = out.pixels();
  for (size_t i = 0; i < transparent.pixel_count(); ++i) {
    const uint8_t alpha = src[4 * i + 3];
    if (alpha == 0) continue;  // the photo, untouched
    for (int c = 0; c < 3; ++c) {
      // premultiplied over: C = Cs + (1 - a) Cd, in linear light
      const float s = srgb8_to_linear(src[4 * i + size_t(c)]), d = srgb8_to_linear(dst[4 * i + size_t(c)]);
      dst[4 * i + size_t(c)] = linear_to_srgb8(s + (1.0f - float(alpha) / 255.0f) * d);
    }
    dst[4 * i + 3] = 255;
  }
  return out;
}

}  // namespace tessera
