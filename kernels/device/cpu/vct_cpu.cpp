#include "kernels/device/cpu/vct_cpu.h"

#include <algorithm>
#include <bit>
#include <chrono>

#include "common/base/error.h"
#include "kernels/device/cpu/vct_parallel.h"

namespace tessera::cpu {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

template <typename Fn>
void parallel_for(uint64_t count, unsigned threads, Fn&& fn) {
  vct_parallel_for(count, threads, std::forward<Fn>(fn));
}

}  // namespace

VctGridParams vct_grid_geometry(const SceneView& scene, uint32_t resolution) {
  const float lo[3] = {scene.bounds_min_x, scene.bounds_min_y, scene.bounds_min_z};
  const float hi[3] = {scene.bounds_max_x, scene.bounds_max_y, scene.bounds_max_z};
  return vct_grid_geometry(lo, hi, resolution);
}

VctGridParams vct_grid_geometry(const float lo[3], const float hi[3], uint32_t resolution) {
  if (resolution < 4 || resolution > 1024 || !std::has_single_bit(resolution))
    throw Error("voxel grid " + std::to_string(resolution) + " is not a power of two in 4..1024");
  VctGridParams p{};
  float extent = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
  if (!(extent > 0.0f)) extent = 1.0f;
  const float v = extent / float(resolution - 1);  // half a voxel of margin at both ends of the longest axis
  const float half = 0.5f * v * float(resolution);
  p.origin_x = 0.5f * (lo[0] + hi[0]) - half;
  p.origin_y = 0.5f * (lo[1] + hi[1]) - half;
  p.origin_z = 0.5f * (lo[2] + hi[2]) - half;
  p.voxel_size = v;
  p.inv_voxel_size = 1.0f / v;
  p.resolution = resolution;
  p.level_count = uint32_t(std::countr_zero(resolution)) + 1;
  uint32_t offset = 0;
  for (uint32_t l = 0; l < p.level_count; ++l) {
    p.map_offset[l] = offset;
    const uint32_t m = vct_level_bricks(&p, l);
    offset += m * m * m;
  }
  p.map_offset[p.level_count] = offset;
  uint32_t dense = 0;
  for (uint32_t l = 0; l < p.level_count; ++l) {
    p.dense_offset[l] = dense;
    dense += vct_dense_level_words(&p, l);
  }
  p.dense_offset[p.level_count] = dense;
  return p;
}

uint32_t vct_total_cells(const VctGridParams& p) { return p.map_offset[p.level_count]; }
uint32_t vct_level_cells(const VctGridParams& p, uint32_t level) { return p.map_offset[level + 1] - p.map_offset[level]; }

void vct_set_offsets(VctGridParams& p, std::span<const uint32_t> counts) {
  uint32_t bricks = 0, voxels = 0;
  for (uint32_t l = 0; l < p.level_count; ++l) {
    p.brick_offset[l] = bricks;
    p.voxel_offset[l] = voxels;
    bricks += counts[2 * l];
    voxels += counts[2 * l + 1];
  }
  p.brick_offset[p.level_count] = bricks;
  p.voxel_offset[p.level_count] = voxels;
}

VctGrid VctGridData::view() const {
  VctGrid g;
  g.p = params;
  g.map = map.data();
  g.bricks = bricks.data();
  g.radiance = radiance.data();
  g.dense = dense.data();
  return g;
}

uint32_t VctGridData::word_at(uint32_t level, uint32_t x, uint32_t y, uint32_t z) const {
  const VctGrid g = view();
  const uint32_t i = vct_lookup(&g, level, x, y, z);
  return i == TS_VCT_NONE ? 0u : radiance[i];
}

uint32_t vct_work_items(const SceneView& scene, std::span<const uint4> spans) {
  return spans.empty() ? scene.triangle_count : spans.back().w + spans.back().z;
}

void vct_voxelize_pass(const SceneView& scene, const ShadingContext& shading, const VctGridParams& params,
                       const VctRegion& region, std::span<const uint4> spans, uint32_t pass, uint32_t* masks,
                       const uint32_t* map, const uint4* bricks, uint32_t* accum, unsigned threads) {
  parallel_for(vct_work_items(scene, spans), threads, [&](uint64_t item) {
    uint32_t slot = 0;
    const uint32_t tri = vct_work_triangle(spans.data(), uint32_t(spans.size()), uint32_t(item), &slot);
    vct_voxelize_lane(&scene, &shading, &params, &region, tri, slot, 0, 1, pass, masks, map, bricks, accum);
  });
}

bool vct_equal_voxels(const VctGridData& a, const VctGridData& b) {
  const VctGridParams& p = a.params;
  if (p.level_count != b.params.level_count || a.dense != b.dense) return false;
  for (uint32_t l = 0; l <= p.level_count; ++l)
    if (p.voxel_offset[l] != b.params.voxel_offset[l] || p.brick_offset[l] != b.params.brick_offset[l]) return false;
  const VctGrid gb = b.view();
  for (uint32_t l = 0; l < p.level_count; ++l)
    for (uint32_t i = p.voxel_offset[l]; i < p.voxel_offset[l + 1]; ++i) {
      const uint32_t pw = a.positions[i];
      const uint32_t j = vct_lookup(&gb, l, vct_pos_x(pw), vct_pos_y(pw), vct_pos_z(pw));
      if (j == TS_VCT_NONE || a.radiance[i] != b.radiance[j]) return false;
      if (l == 0 && (a.albedo[i] != b.albedo[j] || a.normal[i] != b.normal[j])) return false;
    }
  return true;
}

VctGridData vct_build(const SceneView& scene, const ShadingContext& shading, const VctGridParams& geometry, bool solid,
                      std::span<const VctLight> lights, std::span<const uint4> spans, unsigned threads, VctHostTimes* times,
                      bool keep_masks) {
  VctHostTimes local;
  VctHostTimes& t = times ? *times : local;
  VctGridData grid;
  VctGridParams& p = grid.params;
  p = geometry;
  const uint32_t resolution = p.resolution, total_cells = vct_total_cells(p);
  const VctRegion whole = vct_whole_grid(&p);

  // Structure: level-0 masks from the surface fragments (and filled interiors), then every coarser level.
  auto start = Clock::now();
  std::vector<uint32_t> masks(2 * size_t(total_cells), 0);
  vct_voxelize_pass(scene, shading, p, whole, spans, TS_VCT_PASS_MARK, masks.data(), nullptr, nullptr, nullptr, threads);
  t.structure_ms = ms_since(start);
  if (solid) {
    start = Clock::now();
    const uint64_t n = resolution, words = n * n * n / 32;
    std::vector<uint32_t> votes(3 * words, 0);
    for (uint32_t axis = 0; axis < 3; ++axis)
      parallel_for(n * n, threads, [&](uint64_t c) {
        vct_interior_column(&scene, &p, axis, uint32_t(c % n), uint32_t(c / n), votes.data() + axis * words);
      });
    parallel_for(words, threads, [&](uint64_t w) { vct_interior_mark_word(&p, uint32_t(w), votes.data(), uint32_t(words), masks.data()); });
    t.fill_ms = ms_since(start);
  }
  start = Clock::now();
  for (uint32_t l = 0; l + 1 < p.level_count; ++l)
    parallel_for(vct_level_cells(p, l), threads, [&](uint64_t c) { vct_parent_masks_cell(&p, l, uint32_t(c), masks.data()); });
  std::vector<uint32_t> counters(2 * TS_VCT_MAX_LEVELS, 0);
  for (uint32_t l = 0; l < p.level_count; ++l)
    for (uint32_t c = 0; c < vct_level_cells(p, l); ++c) vct_count_cell(&p, l, c, masks.data(), counters.data());
  vct_set_offsets(p, counters);
  grid.map.assign(total_cells, 0);
  grid.bricks.resize(p.brick_offset[p.level_count]);
  grid.positions.resize(p.voxel_offset[p.level_count]);
  grid.radiance.assign(p.voxel_offset[p.level_count], 0);
  grid.dense.assign(p.dense_offset[p.level_count], 0);
  std::fill(counters.begin(), counters.end(), 0u);
  for (uint32_t l = 0; l < p.level_count; ++l)
    parallel_for(vct_level_cells(p, l), threads, [&](uint64_t c) {
      vct_assign_cell(&p, l, uint32_t(c), masks.data(), counters.data(), grid.map.data(), grid.bricks.data(),
                      grid.positions.data(), grid.dense.data());
    });
  if (keep_masks) grid.masks = std::move(masks);
  masks = {};
  t.structure_ms += ms_since(start);

  // Level-0 attributes: the same fragments again, summed into their voxels.
  start = Clock::now();
  const uint32_t count0 = grid.level_voxels(0);
  std::vector<uint32_t> accum(size_t(TS_VCT_ACCUM_WORDS) * count0, 0);
  vct_voxelize_pass(scene, shading, p, whole, spans, TS_VCT_PASS_ACCUMULATE, nullptr, grid.map.data(), grid.bricks.data(),
                    accum.data(), threads);
  grid.albedo.resize(count0);
  grid.normal.resize(count0);
  parallel_for(count0, threads, [&](uint64_t i) {
    vct_finalize_voxel(&shading.color, uint32_t(i), accum.data(), grid.albedo.data(), grid.normal.data());
  });
  t.attributes_ms = ms_since(start);

  vct_relight(grid, scene, shading, lights, threads, &t);
  return grid;
}

void vct_relight(VctGridData& grid, const SceneView& scene, const ShadingContext& shading, std::span<const VctLight> lights,
                 unsigned threads, VctHostTimes* times) {
  auto start = Clock::now();
  const uint32_t count0 = grid.level_voxels(0);
  parallel_for(count0, threads, [&](uint64_t i) {
    grid.radiance[i] = vct_relight_voxel(&scene, &shading.color, &grid.params, lights.data(), uint32_t(lights.size()),
                                         uint32_t(i), grid.positions.data(), grid.albedo.data(), grid.normal.data());
  });
  if (times) times->light_ms = ms_since(start);
  start = Clock::now();
  vct_build_mips(grid, threads);
  if (times) times->mips_ms = ms_since(start);
}

void vct_build_mips(VctGridData& grid, unsigned threads) {
  const VctGrid g = grid.view();
  for (uint32_t l = 1; l < grid.params.level_count; ++l) {
    const uint32_t first = grid.params.voxel_offset[l];
    parallel_for(grid.level_voxels(l), threads, [&](uint64_t k) {
      vct_mip_voxel(&g, l, first + uint32_t(k), grid.positions.data(), grid.radiance.data(), grid.dense.data());
    });
  }
}

void vct_tile(const SceneView& scene, const ShadingContext& shading, const RenderSettings& settings, const VctGridData& grid,
              const VctSettings& vct, std::span<const VctLight> lights, const CameraParams& camera, const TileRect& tile,
              std::span<uint32_t> out, unsigned threads) {
  if (out.size() != size_t(tile.width) * tile.height) throw Error("tile buffer has the wrong size");
  const VctGrid g = grid.view();
  // Pixel blocks whose primary rays trace as one packet (vct_block_surfaces), then each pixel's shading.
  const uint32_t blocks_x = (tile.width + TS_PACKET_BLOCK_W - 1) / TS_PACKET_BLOCK_W;
  const uint32_t blocks_y = (tile.height + TS_PACKET_BLOCK_H - 1) / TS_PACKET_BLOCK_H;
  const uint32_t x_end = tile.x0 + tile.width, y_end = tile.y0 + tile.height;
  parallel_for(uint64_t(blocks_x) * blocks_y, threads, [&](uint64_t b) {
    const uint32_t x0 = tile.x0 + uint32_t(b % blocks_x) * TS_PACKET_BLOCK_W;
    const uint32_t y0 = tile.y0 + uint32_t(b / blocks_x) * TS_PACKET_BLOCK_H;
    VctSurfaceRecord records[TS_SIMD_LANES];
    vct_block_surfaces(&scene, &shading, &settings, &camera, x0, y0, x_end, y_end, records);
    for (uint32_t l = 0; l < TS_SIMD_LANES; ++l) {
      if (!camera_block_inside(x0, y0, l, x_end, y_end)) continue;
      const uint32_t x = camera_block_x(x0, l), y = camera_block_y(y0, l);
      out[size_t(y - tile.y0) * tile.width + (x - tile.x0)] =
          vct_pixel_shade(&scene, &shading, &settings, &g, &vct, lights.data(), &camera, x, y, &records[l]);
    }
  });
}

}  // namespace tessera::cpu
