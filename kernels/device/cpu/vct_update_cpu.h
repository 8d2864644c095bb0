#pragma once
// Incremental re-voxelization on the host: when instances move, only a region of the grid is voxelized
// again. The result equals voxelizing the moved scene from scratch (vct_build with the same geometry):
//   - level-0 voxels of each region (brick-aligned) are cleared and voxelized again from the triangles of
//     every instance that reaches the region (its spans: the moved ones and whatever else lies there);
//   - the coarser levels' brick masks are rebuilt over the region's parent cells;
//   - the sparse layout (map, bricks, active-voxel lists) is laid out again from the masks, a pass over
//     the brick cells, and every voxel outside the region keeps its words (copied, not recomputed): a
//     brick that appears or vanishes shifts the voxel arrays, so they are not updated in place;
//   - the region's voxels are lit, and so is every voxel elsewhere whose shadow ray toward a light
//     crosses a changed box (where geometry changed: the moved instances' old and new boxes);
//   - mip voxels are computed again over the region's cells and above every level-0 voxel whose
//     radiance changed; the rest keep theirs.
// Filled (solid) grids are not updated this way: an interior is decided along whole columns of the grid.
// The work items are kernels/vct/vct_update.h's, which the OpenCL backend launches as kernels
// (worker/render/opencl_vct_update.cpp).
#include <span>
#include <vector>

#include "kernels/device/cpu/vct_cpu.h"

namespace tessera::cpu {

struct VctUpdateCounts {
  uint64_t region_voxels = 0;   // level-0 voxels of the region after the update
  uint64_t shadow_tested = 0;   // voxels outside it whose shadow rays cross the changed box (traced again)
  uint64_t shadow_changed = 0;  // of those, voxels whose light changed
};

// One region of an update: level-0 voxels (whole bricks, see vct_align_region) and the triangles of
// every instance that reach it (kernels/vct/vct_voxelize.h spans, slots of the scene's top level).
struct VctUpdateRegion {
  VctRegion voxels{};
  std::vector<uint4> spans;
};

// `r` grown to whole bricks and clamped to the grid.
VctRegion vct_align_region(const VctGridParams& params, VctRegion r);

// The cells each region recomputes, level by level (kernels/vct/vct_update.h: 6 uints a box, region by
// region, each region's levels in order).
std::vector<uint32_t> vct_update_boxes(const VctGridParams& params, std::span<const VctUpdateRegion> regions);

// The changed boxes grown for the light step's tests (kernels/vct/vct_update.h, vct_update_light_brick):
// by 2 voxels (a voxel's shadow rays), then all of them again by 3 more (a brick's centre).
std::vector<float> vct_grown_boxes(const VctGridParams& params, std::span<const float> changed_boxes);

// grid: built with keep_masks (vct_build). regions: disjoint, brick-aligned. changed_boxes: where geometry
// changed (6 floats a world box: min xyz, max xyz), for the shadow rays that cross it.
void vct_update_region(VctGridData& grid, const SceneView& scene, const ShadingContext& shading,
                       std::span<const VctUpdateRegion> regions, std::span<const float> changed_boxes,
                       std::span<const VctLight> lights, unsigned threads = 0, VctHostTimes* times = nullptr,
                       VctUpdateCounts* counts = nullptr);

}  // namespace tessera::cpu
