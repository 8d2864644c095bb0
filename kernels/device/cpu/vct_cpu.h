#pragma once
// The host backend of the `vct` mode: the work items of kernels/vct/*.h run on a pool of threads, in
// the same order of steps as the OpenCL backend (worker/render/opencl_vct_renderer.cpp). It is the
// reference the OpenCL build is tested against, and a renderer of its own without OpenCL.
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/device/cpu/raytrace_cpu.h"
#include "kernels/vct/vct_build.h"
#include "kernels/vct/vct_shade.h"

namespace tessera::cpu {

// Grid geometry for a scene: a cube around the scene bounds with half a voxel of margin on the longest
// axis, the map and dense-array offsets of every level. resolution: a power of two in 4..1024 (else Error).
VctGridParams vct_grid_geometry(const SceneView& scene, uint32_t resolution);
// The same around the box [lo, hi] (an instanced scene's world box as packed).
VctGridParams vct_grid_geometry(const float lo[3], const float hi[3], uint32_t resolution);
// Total brick cells over all levels (entries of the map; the dense masks hold two words each).
uint32_t vct_total_cells(const VctGridParams& params);
uint32_t vct_level_cells(const VctGridParams& params, uint32_t level);
// Fills brick_offset / voxel_offset from per-level counts (2 per level: bricks, voxels).
void vct_set_offsets(VctGridParams& params, std::span<const uint32_t> counts);

// A voxel grid in host memory, laid out as kernels/vct/vct_common.h describes.
struct VctGridData {
  VctGridParams params{};
  std::vector<uint32_t> map;
  std::vector<uint4> bricks;
  std::vector<uint32_t> radiance, positions;  // every level
  std::vector<uint32_t> albedo, normal;       // level 0
  std::vector<uint32_t> dense;                // level-0 occupancy masks, radiance of levels >= 1
  std::vector<uint32_t> masks;                // every level's brick masks (two words a cell), kept for updates

  VctGrid view() const;
  uint32_t level_voxels(uint32_t level) const { return params.voxel_offset[level + 1] - params.voxel_offset[level]; }
  uint32_t level_bricks(uint32_t level) const { return params.brick_offset[level + 1] - params.brick_offset[level]; }
  // Radiance word of a voxel, 0 when empty.
  uint32_t word_at(uint32_t level, uint32_t x, uint32_t y, uint32_t z) const;
};

// The same grid voxel for voxel, bit for bit (radiance of every level; albedo and normal of level 0; the
// dense arrays), whatever order the two layouts hold their bricks in.
bool vct_equal_voxels(const VctGridData& a, const VctGridData& b);

struct VctHostTimes {
  double structure_ms = 0, fill_ms = 0, attributes_ms = 0, light_ms = 0, mips_ms = 0;
};

// Work items of a voxelization pass: the scene's triangles, or an instanced scene's spans'
// (kernels/vct/vct_voxelize.h).
uint32_t vct_work_items(const SceneView& scene, std::span<const uint4> spans);
// One voxelization pass (TS_VCT_PASS_*) over the voxels of `region`.
void vct_voxelize_pass(const SceneView& scene, const ShadingContext& shading, const VctGridParams& params,
                       const VctRegion& region, std::span<const uint4> spans, uint32_t pass, uint32_t* masks,
                       const uint32_t* map, const uint4* bricks, uint32_t* accum, unsigned threads);

// Voxelizes the scene (surface, plus filled interiors when `solid`) into a grid of `geometry`
// (vct_grid_geometry), lights the voxels and builds the mip levels. spans: an instanced scene's
// triangles as its instances place them (empty: a single-level scene's). keep_masks: the grid keeps
// its brick masks for vct_update_region.
VctGridData vct_build(const SceneView& scene, const ShadingContext& shading, const VctGridParams& geometry, bool solid,
                      std::span<const VctLight> lights, std::span<const uint4> spans = {}, unsigned threads = 0,
                      VctHostTimes* times = nullptr, bool keep_masks = false);
// Direct light of the active level-0 voxels under `lights`, then the mip levels; no voxelization.
void vct_relight(VctGridData& grid, const SceneView& scene, const ShadingContext& shading, std::span<const VctLight> lights,
                 unsigned threads = 0, VctHostTimes* times = nullptr);
void vct_build_mips(VctGridData& grid, unsigned threads = 0);

// Renders `tile` of the vct mode into out (tile pixels row by row, RGBA8).
void vct_tile(const SceneView& scene, const ShadingContext& shading, const RenderSettings& settings, const VctGridData& grid,
              const VctSettings& vct, std::span<const VctLight> lights, const CameraParams& camera, const TileRect& tile,
              std::span<uint32_t> out, unsigned threads = 0);

}  // namespace tessera::cpu
