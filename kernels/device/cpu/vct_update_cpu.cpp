#include "kernels/device/cpu/vct_update_cpu.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>

#include "common/base/error.h"
#include "kernels/device/cpu/vct_parallel.h"
#include "kernels/vct/vct_update.h"

namespace tessera::cpu {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

}  // namespace

VctRegion vct_align_region(const VctGridParams& params, VctRegion r) {
  const int n = int(params.resolution);
  r.lo_x = std::clamp(r.lo_x & ~3, 0, n), r.lo_y = std::clamp(r.lo_y & ~3, 0, n), r.lo_z = std::clamp(r.lo_z & ~3, 0, n);
  r.hi_x = std::clamp((r.hi_x + 3) & ~3, 0, n), r.hi_y = std::clamp((r.hi_y + 3) & ~3, 0, n), r.hi_z = std::clamp((r.hi_z + 3) & ~3, 0, n);
  return r;
}

std::vector<uint32_t> vct_update_boxes(const VctGridParams& p, std::span<const VctUpdateRegion> regions) {
  std::vector<uint32_t> boxes;
  for (const VctUpdateRegion& region : regions) {
    const VctRegion& r = region.voxels;
    uint32_t lo[3] = {uint32_t(r.lo_x), uint32_t(r.lo_y), uint32_t(r.lo_z)};
    uint32_t hi[3] = {uint32_t(r.hi_x), uint32_t(r.hi_y), uint32_t(r.hi_z)};
    for (uint32_t l = 0; l < p.level_count; ++l) {
      const uint32_t m = vct_level_bricks(&p, l);
      uint32_t box[6];
      for (int a = 0; a < 3; ++a) {
        box[a] = std::min(lo[a] >> 2, m);
        box[3 + a] = std::min((hi[a] + 3) >> 2, m);
        lo[a] >>= 1;
        hi[a] = (hi[a] + 1) >> 1;
      }
      boxes.insert(boxes.end(), box, box + 6);
    }
  }
  return boxes;
}

std::vector<float> vct_grown_boxes(const VctGridParams& p, std::span<const float> changed_boxes) {
  std::vector<float> grown(2 * changed_boxes.size());
  for (size_t k = 0; k < changed_boxes.size(); ++k) {
    const float side = k % 6 < 3 ? -1.0f : 1.0f;
    grown[k] = changed_boxes[k] + side * 2.0f * p.voxel_size;
    grown[changed_boxes.size() + k] = grown[k] + side * 3.0f * p.voxel_size;
  }
  return grown;
}

void vct_update_region(VctGridData& grid, const SceneView& scene, const ShadingContext& shading,
                       std::span<const VctUpdateRegion> regions, std::span<const float> changed_boxes,
                       std::span<const VctLight> lights, unsigned threads, VctHostTimes* times, VctUpdateCounts* counts) {
  VctGridParams& p = grid.params;
  const uint32_t levels = p.level_count, total_cells = vct_total_cells(p), region_count = uint32_t(regions.size());
  if (grid.masks.size() != 2 * size_t(total_cells)) throw Error("vct update: the grid kept no brick masks");
  VctHostTimes local;
  VctHostTimes& t = times ? *times : local;
  t = {};
  VctUpdateCounts tally;
  // Each region's cells, level by level (the regions are disjoint bricks at level 0; above, their cells may
  // share parents, which are recomputed from all their children either way).
  const std::vector<uint32_t> boxes = vct_update_boxes(p, regions);
  auto box_count = [&](uint32_t r, uint32_t l) { return vct_box_count(vct_update_box(&p, boxes.data(), r, l)); };
  uint32_t* masks = grid.masks.data();

  // 1. Structure: the regions' level-0 masks cleared and marked again, then each coarser level's masks
  //    over the cells above them, from all their children.
  auto start = Clock::now();
  for (uint32_t r = 0; r < region_count; ++r) {
    vct_parallel_for(box_count(r, 0), threads, [&](uint64_t k) { vct_clear_box_masks(&p, boxes.data(), r, 0, uint32_t(k), masks); });
    vct_voxelize_pass(scene, shading, p, regions[r].voxels, regions[r].spans, TS_VCT_PASS_MARK, masks, nullptr, nullptr,
                      nullptr, threads);
  }
  for (uint32_t l = 0; l + 1 < levels; ++l) {
    for (uint32_t r = 0; r < region_count; ++r)
      for (uint32_t k = 0; k < box_count(r, l + 1); ++k) vct_clear_box_masks(&p, boxes.data(), r, l + 1, k, masks);
    for (uint32_t r = 0; r < region_count; ++r)
      vct_parallel_for(vct_children_count(&p, boxes.data(), r, l), threads,
                       [&](uint64_t k) { vct_box_parent_masks(&p, boxes.data(), r, l, uint32_t(k), masks); });
  }

  // 2. The sparse layout again from the masks; the old arrays are kept to copy what did not change.
  VctGridData old;
  old.params = p;
  old.map = std::move(grid.map);
  old.bricks = std::move(grid.bricks);
  old.radiance = std::move(grid.radiance);
  old.albedo = std::move(grid.albedo);
  old.normal = std::move(grid.normal);
  std::vector<uint32_t> counters(2 * TS_VCT_MAX_LEVELS, 0);
  for (uint32_t l = 0; l < levels; ++l)
    for (uint32_t c = 0; c < vct_level_cells(p, l); ++c) vct_count_cell(&p, l, c, masks, counters.data());
  vct_set_offsets(p, counters);
  grid.map.assign(total_cells, 0);
  grid.bricks.resize(p.brick_offset[levels]);
  grid.positions.resize(p.voxel_offset[levels]);
  grid.radiance.assign(p.voxel_offset[levels], 0);
  const uint32_t count0 = grid.level_voxels(0);
  grid.albedo.resize(count0);
  grid.normal.resize(count0);
  for (uint32_t l = 1; l < levels; ++l)  // the dense words of recomputed cells: empty until their mips
    for (uint32_t r = 0; r < region_count; ++r)
      for (uint32_t k = 0; k < box_count(r, l); ++k) vct_clear_box_dense(&p, boxes.data(), r, l, k, grid.dense.data());
  std::fill(counters.begin(), counters.end(), 0u);
  for (uint32_t l = 0; l < levels; ++l)
    vct_parallel_for(vct_level_cells(p, l), threads, [&](uint64_t c) {
      vct_assign_cell(&p, l, uint32_t(c), masks, counters.data(), grid.map.data(), grid.bricks.data(), grid.positions.data(),
                      grid.dense.data());
    });
  vct_parallel_for(p.brick_offset[levels], threads, [&](uint64_t b) {
    vct_copy_kept_brick(&p, &old.params, uint32_t(b), boxes.data(), region_count, grid.bricks.data(), old.map.data(),
                        old.bricks.data(), old.radiance.data(), old.albedo.data(), old.normal.data(), grid.radiance.data(),
                        grid.albedo.data(), grid.normal.data());
  });
  old = {};
  t.structure_ms = ms_since(start);

  // 3. The regions' attributes: their fragments summed into accumulators of their voxels alone (a copy
  //    of the level-0 bricks whose first voxel counts from the regions' first).
  start = Clock::now();
  std::vector<uint4> local_bricks(grid.bricks.begin(), grid.bricks.begin() + p.brick_offset[1]);
  std::vector<uint32_t> region_bricks(p.brick_offset[1]), local_counters(2, 0);
  vct_parallel_for(p.brick_offset[1], threads, [&](uint64_t b) {
    vct_region_local_brick(&p, uint32_t(b), boxes.data(), region_count, grid.bricks.data(), local_bricks.data(),
                           local_counters.data(), region_bricks.data());
  });
  tally.region_voxels = local_counters[0];
  std::vector<uint32_t> accum(size_t(TS_VCT_ACCUM_WORDS) * local_counters[0], 0);
  for (uint32_t r = 0; r < region_count; ++r)
    vct_voxelize_pass(scene, shading, p, regions[r].voxels, regions[r].spans, TS_VCT_PASS_ACCUMULATE, nullptr,
                      grid.map.data(), local_bricks.data(), accum.data(), threads);
  vct_parallel_for(local_counters[1], threads, [&](uint64_t k) {
    vct_finalize_region_brick(&shading.color, region_bricks[k], grid.bricks.data(), local_bricks.data(), accum.data(),
                              grid.albedo.data(), grid.normal.data());
  });
  t.attributes_ms = ms_since(start);

  // 4. Light: the regions' voxels, and those elsewhere whose shadow rays may cross a changed box.
  start = Clock::now();
  std::vector<uint32_t> dirty(total_cells, 0), light_tally(2, 0);
  const std::vector<float> grown = vct_grown_boxes(p, changed_boxes);
  const uint32_t changed_count = uint32_t(changed_boxes.size() / 6);
  vct_parallel_for(p.brick_offset[1], threads, [&](uint64_t b) {
    vct_update_light_brick(&scene, &shading.color, &p, lights.data(), uint32_t(lights.size()), uint32_t(b), boxes.data(),
                           region_count, grown.data(), grown.data() + 6 * changed_count, changed_count, grid.bricks.data(),
                           grid.positions.data(), grid.albedo.data(), grid.normal.data(), grid.radiance.data(), dirty.data(),
                           light_tally.data());
  });
  tally.shadow_tested = light_tally[0];
  tally.shadow_changed = light_tally[1];
  t.light_ms = ms_since(start);

  // 5. Mips over the recomputed cells and above every changed one, level by level.
  start = Clock::now();
  const VctGrid g = grid.view();
  for (uint32_t l = 1; l < levels; ++l) {
    for (uint32_t r = 0; r < region_count; ++r)
      for (uint32_t k = 0; k < box_count(r, l); ++k) vct_dirty_box_cell(&p, boxes.data(), r, l, k, dirty.data());
    for (uint32_t c = 0; c < vct_level_cells(p, l - 1); ++c) vct_dirty_parent(&p, l - 1, c, dirty.data());
    vct_parallel_for(grid.level_bricks(l), threads,
                     [&](uint64_t k) { vct_update_mip_brick(&g, l, uint32_t(k), dirty.data(), grid.positions.data(), grid.radiance.data(), grid.dense.data()); });
  }
  t.mips_ms = ms_since(start);
  if (counts) *counts = tally;
}

}  // namespace tessera::cpu
