#include "worker/render/pathtrace_frame.h"

#include <algorithm>
#include <chrono>
#include <span>
#include <vector>

namespace tessera {

PtFrameResult render_pathtrace_frame(PathTraceRenderer& renderer, const PtView& view, const RenderSettings& settings,
                                     const PathTraceSettings& pt, uint32_t tile_size, bool want_linear,
                                     const std::function<void(size_t, size_t)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  const uint32_t width = view.eyes[0].width, height = view.eyes[0].height;
  const uint32_t tw = tile_size ? std::min(tile_size, width) : width, th = tile_size ? std::min(tile_size, height) : height;
  const uint32_t tiles_x = (width + tw - 1) / tw, tiles_y = (height + th - 1) / th;
  PtFrameResult frame;
  for (uint32_t e = 0; e < view.eye_count; ++e) {
    frame.eyes[e] = ImageRgba8(int(width), int(height));
    if (want_linear) frame.linear[e] = ImageRgbF(int(width), int(height));
  }
  const ResolveOptions resolve = PathTraceRenderer::resolve_options(pt, 1.0f);
  PtTileStats& t = frame.totals;
  std::vector<PtBatchTile> tiles;
  uint64_t pixels = 0;
  for (uint32_t ty = 0; ty < tiles_y; ++ty)
    for (uint32_t tx = 0; tx < tiles_x; ++tx) {
      const TileRect rect{tx * tw, ty * th, std::min(tw, width - tx * tw), std::min(th, height - ty * th)};
      tiles.push_back({ty * tiles_x + tx, rect, pixels});
      pixels += uint64_t(rect.width) * rect.height * view.eye_count;
    }
  std::vector<uint32_t> out(pixels);
  // All tiles at once where the device launches batches; else tile by tile, with progress.
  const size_t step = renderer.launches_batches() ? tiles.size() : 1;
  for (size_t first = 0; first < tiles.size(); first += step) {
    const std::span<const PtBatchTile> part = std::span<const PtBatchTile>(tiles).subspan(first, std::min(step, tiles.size() - first));
    const std::vector<PtTileStats> stats = renderer.render_tiles(view, settings, pt, part, out);
    for (size_t k = 0; k < part.size(); ++k) {
      const PtBatchTile& tile = part[k];
      const TileRect& rect = tile.rect;
      const size_t n = size_t(rect.width) * rect.height;
      // Linear pixels of both eyes in one resolve (on a device, one set of kernels and one read).
      const PtResolved linear = want_linear ? renderer.cache().find(tile.tile_id)->resolve(resolve, true) : PtResolved{};
      for (uint32_t e = 0; e < view.eye_count; ++e) {
        composite_tile(frame.eyes[e], int(rect.x0), int(rect.y0), int(rect.width), int(rect.height),
                       {reinterpret_cast<const uint8_t*>(out.data() + tile.offset + e * n), n * 4});
        if (want_linear) {
          const std::vector<float>& rgb = linear.linear[e];
          for (uint32_t y = 0; y < rect.height; ++y)
            std::copy_n(&rgb[size_t(y) * rect.width * 3], size_t(rect.width) * 3,
                        frame.linear[e].pixel(int(rect.x0), int(rect.y0 + y)));
        }
      }
      const PtTileStats& s = stats[k];
      t.reset |= s.reset;
      t.device_pixel_samples += s.device_pixel_samples;
      t.helper_pixel_samples += s.helper_pixel_samples;
      t.reprojected += s.reprojected;
      t.segments += s.segments;
      t.stopped += s.stopped;
      t.helper_batches += s.helper_batches;
      t.median_pixels += s.median_pixels;
      t.device_ms += s.device_ms;
      t.merge_ms += s.merge_ms;
      t.resolve_ms += s.resolve_ms;
      t.accumulated_spp += s.accumulated_spp * double(rect.width) * rect.height;
      ++frame.tiles;
    }
    if (progress) progress(frame.tiles, tiles.size());
  }
  t.accumulated_spp /= double(width) * height;
  t.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return frame;
}

}  // namespace tessera
