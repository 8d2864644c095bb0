#include "worker/render/vct_renderer.h"

#include <algorithm>
#include <chrono>

#include "common/base/error.h"
#include "worker/render/host_vct_renderer.h"
#include "worker/render/opencl_vct_renderer.h"

namespace tessera {

VctGridStats vct_grid_stats(const VctGridParams& p, uint64_t transient_peak_bytes) {
  VctGridStats s;
  s.resolution = p.resolution;
  s.levels = p.level_count;
  s.voxel_size = p.voxel_size;
  for (uint32_t l = 0; l < p.level_count; ++l) {
    s.voxels_per_level.push_back(p.voxel_offset[l + 1] - p.voxel_offset[l]);
    s.bricks_per_level.push_back(p.brick_offset[l + 1] - p.brick_offset[l]);
  }
  const uint64_t voxels = p.voxel_offset[p.level_count], level0 = p.voxel_offset[1];
  s.map_bytes = uint64_t(cpu::vct_total_cells(p)) * 4;
  s.brick_bytes = uint64_t(p.brick_offset[p.level_count]) * 16;
  s.radiance_bytes = voxels * 4;
  s.position_bytes = voxels * 4;
  s.attribute_bytes = level0 * 8;
  s.dense_bytes = uint64_t(p.dense_offset[p.level_count]) * 4;
  s.transient_peak_bytes = transient_peak_bytes;
  return s;
}

std::unique_ptr<VctRenderer> make_vct_renderer(const PackedScene& scene, const RendererOptions& renderer,
                                               const VctOptions& options, const std::optional<std::vector<VctLight>>& lights) {
  std::vector<VctLight> l = lights ? *lights : vct_lights_for_scene(scene);
  if (renderer.device == "host")
    return std::make_unique<HostVctRenderer>(scene, renderer.host_threads, options, std::move(l), renderer.scene_memory);
  return std::make_unique<OpenClVctRenderer>(scene, renderer.device, renderer.gpu_memory_limit, options, std::move(l),
                                             renderer.scene_memory);
}

BatchTiming VctRenderer::render_tiles(const std::array<CameraParams, 2>& cameras, const RenderSettings& settings,
                                      const VctFrameSettings& frame, std::span<const BatchTile> tiles, std::span<uint32_t> out,
                                      const StopRequested& stop) {
  const auto start = std::chrono::steady_clock::now();
  for (const BatchTile& tile : tiles) {
    if (stop && stop()) throw RenderCanceled();
    const uint64_t pixels = uint64_t(tile.rect.width) * tile.rect.height;
    if (tile.eye > 1 || tile.offset + pixels > out.size()) throw Error("batch tile outside the batch's output");
    render_tile(cameras[tile.eye], settings, frame, tile.rect, out.subspan(tile.offset, pixels));
  }
  return {std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(), 0.0};  // with its readbacks
}

ImageRgba8 render_vct_frame(VctRenderer& renderer, const CameraParams& camera, const RenderSettings& settings,
                            const VctFrameSettings& frame, uint32_t tile_size, const std::function<void(size_t, size_t)>& progress) {
  ImageRgba8 image(int(camera.width), int(camera.height));
  const uint32_t tiles_x = (camera.width + tile_size - 1) / tile_size, tiles_y = (camera.height + tile_size - 1) / tile_size;
  std::vector<uint32_t> pixels;
  for (uint32_t ty = 0; ty < tiles_y; ++ty)
    for (uint32_t tx = 0; tx < tiles_x; ++tx) {
      const TileRect tile{tx * tile_size, ty * tile_size, std::min(tile_size, camera.width - tx * tile_size),
                          std::min(tile_size, camera.height - ty * tile_size)};
      pixels.resize(size_t(tile.width) * tile.height);
      renderer.render_tile(camera, settings, frame, tile, pixels);
      composite_tile(image, int(tile.x0), int(tile.y0), int(tile.width), int(tile.height),
                     {reinterpret_cast<const uint8_t*>(pixels.data()), pixels.size() * 4});
      if (progress) progress(ty * tiles_x + tx + 1, size_t(tiles_x) * tiles_y);
    }
  return image;
}

}  // namespace tessera
