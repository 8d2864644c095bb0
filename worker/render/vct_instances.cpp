#include "worker/render/vct_instances.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/scene/scene_motion.h"
#include "kernels/accel/instance_traverse.h"

namespace tessera {
namespace {

// A box in world space as level-0 voxels of the grid, 2 voxels larger on every side (a triangle's
// conservative voxels reach one beyond its box, and its corners are transformed with float rounding),
// clamped to the grid. Empty (lo >= hi) when it lies outside.
VctRegion voxels_of(const VctGridParams& p, const Aabb& box) {
  const float origin[3] = {p.origin_x, p.origin_y, p.origin_z};
  int lo[3], hi[3];
  const int n = int(p.resolution);
  for (int a = 0; a < 3; ++a) {
    const float l = std::floor((box.min[a] - origin[a]) * p.inv_voxel_size) - 2.0f;
    const float h = std::floor((box.max[a] - origin[a]) * p.inv_voxel_size) + 3.0f;
    lo[a] = int(std::clamp(l, 0.0f, float(n)));
    hi[a] = int(std::clamp(h, 0.0f, float(n)));
  }
  return {lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]};
}

bool empty(const VctRegion& r) { return r.hi_x <= r.lo_x || r.hi_y <= r.lo_y || r.hi_z <= r.lo_z; }

bool overlaps(const VctRegion& a, const VctRegion& b) {
  return a.lo_x < b.hi_x && b.lo_x < a.hi_x && a.lo_y < b.hi_y && b.lo_y < a.hi_y && a.lo_z < b.hi_z && b.lo_z < a.hi_z;
}

void merge(VctRegion& into, const VctRegion& r) {
  into.lo_x = std::min(into.lo_x, r.lo_x), into.lo_y = std::min(into.lo_y, r.lo_y), into.lo_z = std::min(into.lo_z, r.lo_z);
  into.hi_x = std::max(into.hi_x, r.hi_x), into.hi_y = std::max(into.hi_y, r.hi_y), into.hi_z = std::max(into.hi_z, r.hi_z);
}

// Slot of each instance id (the scene's order) in a top level.
std::vector<uint32_t> slots_by_id(const TopLevelBvh& top) {
  std::vector<uint32_t> slots(top.instance_count, TS_NO_INSTANCE);
  for (uint32_t s = 0; s < top.instance_count; ++s) {
    const uint32_t id = top.instances[size_t(TS_INSTANCE_WORDS) * s + 13];
    if (id < slots.size()) slots[id] = s;
  }
  return slots;
}

// `box` (object space) in world space under instance slot `slot` of `view`: its corners transformed.
Aabb world_box(const InstanceView& view, uint32_t slot, const Aabb& box) {
  float3 corners[8];
  for (int c = 0; c < 8; ++c)
    corners[c] = make_float3(c & 1 ? box.max[0] : box.min[0], c & 2 ? box.max[1] : box.min[1], c & 4 ? box.max[2] : box.min[2]);
  instance_points_to_world(&view, slot, corners, 8);
  Aabb out;
  for (const float3& p : corners) out.extend({p.x, p.y, p.z});
  return out;
}

uint32_t object_end(const PackedScene& scene, uint32_t object) {
  const std::vector<uint32_t>& first = scene.object_first_triangles();
  return object + 1 < first.size() ? first[object + 1] : scene.triangle_count();
}

}  // namespace

VctTriangleBlocks vct_triangle_blocks(const PackedScene& scene) {
  VctTriangleBlocks blocks;
  const SceneView view = scene.host_view();
  for (uint32_t o = 0; o < scene.objects().size(); ++o) {
    blocks.first_box.push_back(uint32_t(blocks.boxes.size()));
    const uint32_t begin = scene.object_first_triangles()[o], end = object_end(scene, o);
    for (uint32_t t = begin; t < end; t += kVctBlockTriangles) {
      Aabb box;
      for (uint32_t k = t; k < std::min(end, t + kVctBlockTriangles); ++k) {
        float3 p[3];
        scene_triangle_vertices(&view, k, &p[0], &p[1], &p[2]);
        for (const float3& q : p) box.extend({q.x, q.y, q.z});
      }
      blocks.boxes.push_back(box);
    }
  }
  return blocks;
}

Aabb vct_grid_bounds(const PackedScene& scene) {
  if (scene.instanced()) return SceneMotion::of_scene(scene, "scene")->top_level().bounds;
  const SceneView v = scene.host_view();
  Aabb box;
  box.extend({v.bounds_min_x, v.bounds_min_y, v.bounds_min_z});
  box.extend({v.bounds_max_x, v.bounds_max_y, v.bounds_max_z});
  return box;
}

std::vector<uint4> vct_spans(const PackedScene& scene, const TopLevelBvh& top) {
  std::vector<uint4> spans;
  uint32_t items = 0;
  for (uint32_t s = 0; s < top.instance_count; ++s) {
    const uint32_t object = top.instances[size_t(TS_INSTANCE_WORDS) * s + 12];
    const uint32_t begin = scene.object_first_triangles()[object], end = object_end(scene, object);
    spans.push_back({s, begin, end - begin, items});
    items += end - begin;
  }
  return spans;
}

std::vector<Aabb> vct_instance_boxes(const PackedScene& scene, const TopLevelBvh& top) {
  const InstanceView view{top.instance_count, top.nodes.data(), top.instances.data(), nullptr};
  std::vector<Aabb> boxes(top.instance_count);
  for (uint32_t s = 0; s < top.instance_count; ++s)
    boxes[s] = world_box(view, s, scene.objects()[top.instances[size_t(TS_INSTANCE_WORDS) * s + 12]].bounds);
  return boxes;
}

VctUpdatePlan vct_plan_update(const PackedScene& scene, const VctGridParams& params, const TopLevelBvh& before,
                              const TopLevelBvh& now, const VctTriangleBlocks* blocks) {
  VctUpdatePlan plan;
  const std::vector<Aabb> old_boxes = vct_instance_boxes(scene, before), new_boxes = vct_instance_boxes(scene, now);
  const std::vector<uint32_t> old_slots = slots_by_id(before), new_slots = slots_by_id(now);
  std::vector<VctRegion> regions;
  auto add = [&](const Aabb& box) {
    plan.changed.insert(plan.changed.end(), {box.min[0], box.min[1], box.min[2], box.max[0], box.max[1], box.max[2]});
    const VctRegion r = cpu::vct_align_region(params, voxels_of(params, box));
    if (!empty(r)) regions.push_back(r);
  };
  for (uint32_t id = 0; id < new_slots.size(); ++id) {
    const uint32_t s = new_slots[id], o = id < old_slots.size() ? old_slots[id] : TS_NO_INSTANCE;
    const uint32_t* a = now.instances.data() + size_t(TS_INSTANCE_WORDS) * s;
    if (o != TS_NO_INSTANCE && std::memcmp(a, before.instances.data() + size_t(TS_INSTANCE_WORDS) * o, 15 * 4) == 0) continue;
    ++plan.moved;
    add(new_boxes[s]);
    if (o != TS_NO_INSTANCE) add(old_boxes[o]);
  }
  // Overlapping boxes merged until the regions are disjoint (each voxel is then voxelized once).
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t i = 0; i < regions.size() && !merged; ++i)
      for (size_t j = i + 1; j < regions.size() && !merged; ++j)
        if (overlaps(regions[i], regions[j])) {
          merge(regions[i], regions[j]);
          regions.erase(regions.begin() + std::ptrdiff_t(j));
          merged = true;
        }
  }
  for (const VctRegion& r : regions) plan.regions.push_back({r, {}});
  if (plan.moved == 0) return plan;  // (moved only outside the grid: no region, shadows may still change)
  const uint64_t n = params.resolution;
  plan.whole_grid = 2 * plan.region_voxels() > n * n * n;
  if (plan.whole_grid || !blocks) return plan;
  // Each region's runs of triangles of the instances that reach it, merged where they follow each other.
  const InstanceView view{now.instance_count, now.nodes.data(), now.instances.data(), nullptr};
  for (cpu::VctUpdateRegion& region : plan.regions) {
    uint32_t items = 0;
    for (uint32_t s = 0; s < now.instance_count; ++s) {
      if (!overlaps(voxels_of(params, new_boxes[s]), region.voxels)) continue;
      const uint32_t object = now.instances[size_t(TS_INSTANCE_WORDS) * s + 12];
      const uint32_t begin = scene.object_first_triangles()[object], end = object_end(scene, object);
      for (uint32_t t = begin, b = blocks->first_box[object]; t < end; t += kVctBlockTriangles, ++b) {
        if (!overlaps(voxels_of(params, world_box(view, s, blocks->boxes[b])), region.voxels)) continue;
        const uint32_t count = std::min(end, t + kVctBlockTriangles) - t;
        uint4* last = region.spans.empty() ? nullptr : &region.spans.back();
        if (last && last->x == s && last->y + last->z == t) last->z += count;
        else region.spans.push_back({s, t, count, items});
        items += count;
      }
    }
  }
  return plan;
}

}  // namespace tessera
