#pragma once
// An instanced scene in the vct mode (docs/instances.md): the grid is voxelized in world space, each
// instance's object triangles carried there by its transform (kernels/vct/vct_voxelize.h, spans). The
// grid's geometry is fixed when the renderer is made, around the instances as packed (time 0); what
// moves outside it later has no voxels. When instances move, vct_plan_update says where the grid must
// change: regions of level-0 voxels over the moved instances' old and new world boxes (overlapping
// ones merged), and the runs of triangles that reach each.
#include <span>
#include <vector>

#include "common/scene/packed_scene.h"
#include "common/scene/top_level_bvh.h"
#include "kernels/device/cpu/vct_update_cpu.h"
#include "kernels/vct/vct_voxelize.h"

namespace tessera {

// The world box the grid is laid around: an instanced scene's instances as packed, else the scene's bounds.
Aabb vct_grid_bounds(const PackedScene& scene);

// Voxelization spans of every instance of `top`, in slot order.
std::vector<uint4> vct_spans(const PackedScene& scene, const TopLevelBvh& top);

// The world box of each slot of `top`: its object's box under its transform.
std::vector<Aabb> vct_instance_boxes(const PackedScene& scene, const TopLevelBvh& top);

// Object-space boxes of runs of kVctBlockTriangles consecutive triangles of every object: an update
// voxelizes only the runs that reach its region (a large static object, e.g. a building the moving
// things pass through, is not walked triangle by triangle every time).
inline constexpr uint32_t kVctBlockTriangles = 64;
struct VctTriangleBlocks {
  std::vector<Aabb> boxes;          // object after object, its triangles' runs in order
  std::vector<uint32_t> first_box;  // each object's first box
};
VctTriangleBlocks vct_triangle_blocks(const PackedScene& scene);

struct VctUpdatePlan {
  uint32_t moved = 0;          // instances whose transform changed
  bool whole_grid = false;     // the regions cover over half the grid: voxelize everything again
  std::vector<cpu::VctUpdateRegion> regions;  // disjoint boxes of level-0 voxels (whole bricks) and their triangles
  std::vector<float> changed;  // where geometry changed: the moved instances' old and new world boxes, 6 floats each
  uint64_t region_voxels() const {
    uint64_t v = 0;
    for (const auto& r : regions)
      v += uint64_t(r.voxels.hi_x - r.voxels.lo_x) * uint64_t(r.voxels.hi_y - r.voxels.lo_y) * uint64_t(r.voxels.hi_z - r.voxels.lo_z);
    return v;
  }
};

// What changes in a grid of `params` when the instances placed by `before` are placed by `now`; blocks:
// vct_triangle_blocks (without them, no spans are planned).
VctUpdatePlan vct_plan_update(const PackedScene& scene, const VctGridParams& params, const TopLevelBvh& before,
                              const TopLevelBvh& now, const VctTriangleBlocks* blocks = nullptr);

}  // namespace tessera
