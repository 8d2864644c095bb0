#include "kernels/device/cpu/vct_update_cpu.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>

#include "common/base/error.h"
#include "kernels/device/cpu/vct_parallel.h"

namespace tessera::cpu {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// A box of brick cells of one level, [lo, hi) on each axis.
struct CellBox {
  uint32_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  bool contains(uint32_t x, uint32_t y, uint32_t z) const {
    return x >= lo[0] && x < hi[0] && y >= lo[1] && y < hi[1] && z >= lo[2] && z < hi[2];
  }
  uint64_t count() const { return uint64_t(hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]); }
  // The cell index (in its level) of the k-th cell of the box.
  uint32_t cell(uint64_t k, uint32_t m) const {
    const uint32_t w = hi[0] - lo[0], h = hi[1] - lo[1];
    const uint32_t x = lo[0] + uint32_t(k % w), y = lo[1] + uint32_t((k / w) % h), z = lo[2] + uint32_t(k / (uint64_t(w) * h));
    return (z * m + y) * m + x;
  }
};

// The cells of every level whose voxels the update recomputes: level 0 a region's, each coarser
// level those over the previous level's voxels.
std::vector<CellBox> region_cells(const VctGridParams& p, const VctRegion& r) {
  std::vector<CellBox> boxes(p.level_count);
  uint32_t lo[3] = {uint32_t(r.lo_x), uint32_t(r.lo_y), uint32_t(r.lo_z)};
  uint32_t hi[3] = {uint32_t(r.hi_x), uint32_t(r.hi_y), uint32_t(r.hi_z)};
  for (uint32_t l = 0; l < p.level_count; ++l) {
    const uint32_t m = vct_level_bricks(&p, l);
    for (int a = 0; a < 3; ++a) {
      boxes[l].lo[a] = std::min(lo[a] >> 2, m);
      boxes[l].hi[a] = std::min((hi[a] + 3) >> 2, m);
      lo[a] >>= 1;
      hi[a] = (hi[a] + 1) >> 1;
    }
  }
  return boxes;
}

void cell_coords(uint32_t cell, uint32_t m, uint32_t* c) {
  c[0] = cell % m;
  c[1] = (cell / m) % m;
  c[2] = cell / (m * m);
}

// Does the segment from `a` along `d` for t in [0, t_end] cross the box [lo, hi]?
bool segment_crosses(float3 a, float3 d, float t_end, const float lo[3], const float hi[3]) {
  float t0 = 0.0f, t1 = t_end;
  const float o[3] = {a.x, a.y, a.z}, v[3] = {d.x, d.y, d.z};
  for (int k = 0; k < 3; ++k) {
    if (v[k] == 0.0f) {
      if (o[k] < lo[k] || o[k] > hi[k]) return false;
      continue;
    }
    float ta = (lo[k] - o[k]) / v[k], tb = (hi[k] - o[k]) / v[k];
    if (ta > tb) std::swap(ta, tb);
    t0 = std::max(t0, ta);
    t1 = std::min(t1, tb);
    if (t0 > t1) return false;
  }
  return true;
}

// Could a shadow ray of the level-0 voxel centred at c cross the box? A shadow ray starts within
// 1.5 voxels of the centre (on the voxel's plane, half a voxel toward the light), so the box is taken
// 2 voxels larger: every segment from such a start to the light then stays within it where the
// segment from the centre does not.
bool shadow_may_cross(float3 c, std::span<const VctLight> lights, std::span<const float> boxes) {
  for (size_t b = 0; b + 6 <= boxes.size(); b += 6) {
    const float* lo = boxes.data() + b;
    const float* hi = lo + 3;
    for (const VctLight& l : lights) {
      if (l.type == TS_VCT_LIGHT_DIRECTIONAL) {
        if (segment_crosses(c, make_float3(-l.x, -l.y, -l.z), INFINITY, lo, hi)) return true;
      } else if (segment_crosses(c, v3_sub(make_float3(l.x, l.y, l.z), c), 1.0f, lo, hi)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

VctRegion vct_align_region(const VctGridParams& params, VctRegion r) {
  const int n = int(params.resolution);
  r.lo_x = std::clamp(r.lo_x & ~3, 0, n), r.lo_y = std::clamp(r.lo_y & ~3, 0, n), r.lo_z = std::clamp(r.lo_z & ~3, 0, n);
  r.hi_x = std::clamp((r.hi_x + 3) & ~3, 0, n), r.hi_y = std::clamp((r.hi_y + 3) & ~3, 0, n), r.hi_z = std::clamp((r.hi_z + 3) & ~3, 0, n);
  return r;
}

void vct_update_region(VctGridData& grid, const SceneView& scene, const ShadingContext& shading,
                       std::span<const VctUpdateRegion> regions, std::span<const float> changed_boxes,
                       std::span<const VctLight> lights, unsigned threads, VctHostTimes* times, VctUpdateCounts* counts) {
  VctGridParams& p = grid.params;
  const uint32_t levels = p.level_count, total_cells = vct_total_cells(p);
  if (grid.masks.size() != 2 * size_t(total_cells)) throw Error("vct update: the grid kept no brick masks");
  VctHostTimes local;
  VctHostTimes& t = times ? *times : local;
  t = {};
  VctUpdateCounts tally;
  // Each region's cells, level by level (the regions are disjoint bricks at level 0; above, their cells may
  // share parents, which are recomputed from all their children either way).
  std::vector<std::vector<CellBox>> boxes;
  for (const VctUpdateRegion& r : regions) boxes.push_back(region_cells(p, r.voxels));
  auto recomputed = [&](uint32_t level, uint32_t cell) {
    uint32_t c[3];
    cell_coords(cell, vct_level_bricks(&p, level), c);
    for (const auto& b : boxes)
      if (b[level].contains(c[0], c[1], c[2])) return true;
    return false;
  };
  uint32_t* masks = grid.masks.data();

  // 1. Structure: the regions' level-0 masks cleared and marked again, then each coarser level's masks
  //    over the cells above them, from all their children.
  auto start = Clock::now();
  for (size_t r = 0; r < regions.size(); ++r) {
    vct_parallel_for(boxes[r][0].count(), threads, [&](uint64_t k) {
      const uint32_t cell = p.map_offset[0] + boxes[r][0].cell(k, vct_level_bricks(&p, 0));
      masks[2 * size_t(cell)] = masks[2 * size_t(cell) + 1] = 0;
    });
    vct_voxelize_pass(scene, shading, p, regions[r].voxels, regions[r].spans, TS_VCT_PASS_MARK, masks, nullptr, nullptr,
                      nullptr, threads);
  }
  for (uint32_t l = 0; l + 1 < levels; ++l) {
    const uint32_t pm = vct_level_bricks(&p, l + 1), cm = vct_level_bricks(&p, l);
    for (const auto& b : boxes)
      for (uint64_t k = 0; k < b[l + 1].count(); ++k) {
        const uint32_t cell = p.map_offset[l + 1] + b[l + 1].cell(k, pm);
        masks[2 * size_t(cell)] = masks[2 * size_t(cell) + 1] = 0;
      }
    for (const auto& b : boxes) {
      CellBox children;
      for (int a = 0; a < 3; ++a)
        children.lo[a] = std::min(2 * b[l + 1].lo[a], cm), children.hi[a] = std::min(2 * b[l + 1].hi[a], cm);
      vct_parallel_for(children.count(), threads, [&](uint64_t k) { vct_parent_masks_cell(&p, l, children.cell(k, cm), masks); });
    }
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
  for (uint32_t l = 1; l < levels; ++l) {  // the dense words of recomputed cells: empty until their mips
    const uint32_t m = vct_level_bricks(&p, l);
    for (const auto& b : boxes)
      for (uint64_t k = 0; k < b[l].count(); ++k) std::fill_n(grid.dense.begin() + p.dense_offset[l] + 64 * size_t(b[l].cell(k, m)), 64, 0u);
  }
  std::fill(counters.begin(), counters.end(), 0u);
  for (uint32_t l = 0; l < levels; ++l)
    vct_parallel_for(vct_level_cells(p, l), threads, [&](uint64_t c) {
      vct_assign_cell(&p, l, uint32_t(c), masks, counters.data(), grid.map.data(), grid.bricks.data(), grid.positions.data(),
                      grid.dense.data());
    });
  // Bricks outside the recomputed cells have the masks they had: their words are copied.
  auto level_of_brick = [&](uint32_t b) {
    uint32_t l = 0;
    while (b >= p.brick_offset[l + 1]) ++l;
    return l;
  };
  vct_parallel_for(p.brick_offset[levels], threads, [&](uint64_t b) {
    const uint4 rec = grid.bricks[b];
    const uint32_t level = level_of_brick(uint32_t(b));
    if (recomputed(level, rec.w)) return;
    const uint32_t ob = old.map[old.params.map_offset[level] + rec.w];
    const uint4 was = old.bricks[ob - 1];
    const uint32_t count = uint32_t(std::popcount(rec.x) + std::popcount(rec.y));
    std::copy_n(old.radiance.begin() + was.z, count, grid.radiance.begin() + rec.z);
    if (level == 0) {
      std::copy_n(old.albedo.begin() + was.z, count, grid.albedo.begin() + rec.z);
      std::copy_n(old.normal.begin() + was.z, count, grid.normal.begin() + rec.z);
    }
  });
  old = {};
  t.structure_ms = ms_since(start);

  // 3. The regions' attributes: their fragments summed into accumulators of their voxels alone (a copy
  //    of the level-0 bricks whose first voxel counts from the region's first), region by region.
  start = Clock::now();
  std::vector<uint4> local_bricks(grid.bricks.begin(), grid.bricks.begin() + p.brick_offset[1]);
  for (size_t r = 0; r < regions.size(); ++r) {
    std::vector<uint32_t> region_bricks;
    for (uint32_t b = 0; b < p.brick_offset[1]; ++b) {
      uint32_t c[3];
      cell_coords(grid.bricks[b].w, vct_level_bricks(&p, 0), c);
      if (boxes[r][0].contains(c[0], c[1], c[2])) region_bricks.push_back(b);
    }
    std::vector<uint32_t> local_first(region_bricks.size());
    uint32_t region_voxels = 0;
    for (size_t k = 0; k < region_bricks.size(); ++k) {
      uint4& rec = local_bricks[region_bricks[k]];
      local_first[k] = region_voxels;
      rec.z = region_voxels;
      region_voxels += uint32_t(std::popcount(rec.x) + std::popcount(rec.y));
    }
    tally.region_voxels += region_voxels;
    std::vector<uint32_t> accum(size_t(TS_VCT_ACCUM_WORDS) * region_voxels, 0);
    vct_voxelize_pass(scene, shading, p, regions[r].voxels, regions[r].spans, TS_VCT_PASS_ACCUMULATE, nullptr,
                      grid.map.data(), local_bricks.data(), accum.data(), threads);
    vct_parallel_for(region_bricks.size(), threads, [&](uint64_t k) {
      const uint4 rec = grid.bricks[region_bricks[k]];
      const uint32_t count = uint32_t(std::popcount(rec.x) + std::popcount(rec.y));
      for (uint32_t v = 0; v < count; ++v)
        vct_finalize_voxel(&shading.color, v, accum.data() + size_t(TS_VCT_ACCUM_WORDS) * local_first[k],
                           grid.albedo.data() + rec.z, grid.normal.data() + rec.z);
    });
  }
  t.attributes_ms = ms_since(start);

  // 4. Light: the regions' voxels, and those elsewhere whose shadow rays may cross a changed box.
  start = Clock::now();
  std::vector<std::vector<uint8_t>> dirty(levels);
  for (uint32_t l = 0; l < levels; ++l) dirty[l].assign(vct_level_cells(p, l), 0);
  const float margin = 2.0f * p.voxel_size;
  std::vector<float> grown(changed_boxes.begin(), changed_boxes.end());
  for (size_t k = 0; k < grown.size(); ++k) grown[k] += k % 6 < 3 ? -margin : margin;
  // A brick first: every voxel centre lies within 2.6 voxels of the brick's centre, so a brick whose
  // centre's segments miss the boxes grown 3 voxels more has no voxel whose segments reach them.
  std::vector<float> brick_grown(grown);
  for (size_t k = 0; k < brick_grown.size(); ++k) brick_grown[k] += (k % 6 < 3 ? -3.0f : 3.0f) * p.voxel_size;
  std::atomic<uint64_t> tested{0}, changed{0};
  vct_parallel_for(p.brick_offset[1], threads, [&](uint64_t b) {
    const uint4 rec = grid.bricks[b];
    const uint32_t count = uint32_t(std::popcount(rec.x) + std::popcount(rec.y));
    const bool inside = recomputed(0, rec.w);
    if (!inside) {
      uint32_t c[3];
      cell_coords(rec.w, vct_level_bricks(&p, 0), c);
      const float3 mid = make_float3(p.origin_x + float(4 * c[0] + 2) * p.voxel_size, p.origin_y + float(4 * c[1] + 2) * p.voxel_size,
                                     p.origin_z + float(4 * c[2] + 2) * p.voxel_size);
      if (!shadow_may_cross(mid, lights, brick_grown)) return;
    }
    uint64_t brick_tested = 0, brick_changed = 0;
    for (uint32_t i = rec.z; i < rec.z + count; ++i) {
      if (!inside) {
        const uint32_t pw = grid.positions[i];
        if (!shadow_may_cross(vct_voxel_center(&p, 0, vct_pos_x(pw), vct_pos_y(pw), vct_pos_z(pw)), lights, grown)) continue;
        ++brick_tested;
      }
      const uint32_t w = vct_relight_voxel(&scene, &shading.color, &p, lights.data(), uint32_t(lights.size()), i,
                                           grid.positions.data(), grid.albedo.data(), grid.normal.data());
      if (!inside && w != grid.radiance[i]) ++brick_changed;
      grid.radiance[i] = w;
    }
    if (inside || brick_changed) dirty[0][rec.w] = 1;
    tested += brick_tested;
    changed += brick_changed;
  });
  tally.shadow_tested = tested;
  tally.shadow_changed = changed;
  t.light_ms = ms_since(start);

  // 5. Mips over the recomputed cells and above every changed one, level by level.
  start = Clock::now();
  const VctGrid g = grid.view();
  for (uint32_t l = 1; l < levels; ++l) {
    const uint32_t m = vct_level_bricks(&p, l), cm = vct_level_bricks(&p, l - 1);
    for (const auto& b : boxes)
      for (uint64_t k = 0; k < b[l].count(); ++k) dirty[l][b[l].cell(k, m)] = 1;
    for (uint32_t c = 0; c < dirty[l - 1].size(); ++c) {
      if (!dirty[l - 1][c]) continue;
      uint32_t xyz[3];
      cell_coords(c, cm, xyz);
      dirty[l][((std::min(xyz[2] >> 1, m - 1) * m) + std::min(xyz[1] >> 1, m - 1)) * m + std::min(xyz[0] >> 1, m - 1)] = 1;
    }
    vct_parallel_for(grid.level_bricks(l), threads, [&](uint64_t k) {
      const uint4 rec = grid.bricks[p.brick_offset[l] + k];
      if (!dirty[l][rec.w]) return;
      const uint32_t count = uint32_t(std::popcount(rec.x) + std::popcount(rec.y));
      for (uint32_t i = rec.z; i < rec.z + count; ++i)
        vct_mip_voxel(&g, l, i, grid.positions.data(), grid.radiance.data(), grid.dense.data());
    });
  }
  t.mips_ms = ms_since(start);
  if (counts) *counts = tally;
}

}  // namespace tessera::cpu
