#include "common/render/instance_emitters.h"

#include "common/base/error.h"
#include "kernels/accel/instance_traverse.h"

namespace tessera {

InstanceEmitters::InstanceEmitters(const PackedScene& scene, const ShadingData& shading) {
  const SceneView view = scene.host_view();  // the corners ShadingData measures emitters by
  const std::vector<uint32_t>& firsts = scene.object_first_triangles();
  const auto runs = shading.material_runs;
  for (size_t o = 0; o < firsts.size(); ++o) {
    object_first_.push_back(uint32_t(corners_.size()));
    const uint32_t end = o + 1 < firsts.size() ? firsts[o + 1] : scene.triangle_count();
    for (uint32_t t = firsts[o]; t < end; ++t) {
      const uint32_t material = material_of_triangle(runs.data(), uint32_t(runs.size() / 2), t);
      if (shading.materials[material].type != TS_MATERIAL_EMISSIVE) continue;
      Emitter e{t, {}, {}, {}};
      scene_triangle_vertices(&view, t, &e.p0, &e.p1, &e.p2);
      corners_.push_back(e);
    }
  }
  object_first_.push_back(uint32_t(corners_.size()));
}

std::vector<EmitterGpu> InstanceEmitters::place(const TopLevelBvh& top) const {
  std::vector<EmitterGpu> out;
  if (corners_.empty()) return out;
  // The kernels' own arithmetic takes each triangle to world space (instance_points_to_world), so
  // an area here is that of the triangle a light sample lands on.
  const InstanceView view{top.instance_count, top.nodes.data(), top.instances.data(), nullptr};
  std::vector<uint32_t> slot_of(top.instance_count, TS_NO_INSTANCE);
  for (uint32_t slot = 0; slot < top.instance_count; ++slot) {
    const uint32_t id = top.instances[size_t(TS_INSTANCE_WORDS) * slot + 13];
    if (id >= top.instance_count) throw Error("top level: instance id " + std::to_string(id) + " out of range");
    slot_of[id] = slot;
  }
  float total = 0.0f;
  for (uint32_t id = 0; id < top.instance_count; ++id) {
    const uint32_t slot = slot_of[id];
    const uint32_t object = top.instances[size_t(TS_INSTANCE_WORDS) * slot + 12];
    if (object + 1 >= object_first_.size()) throw Error("top level: object " + std::to_string(object) + " out of range");
    for (uint32_t k = object_first_[object]; k < object_first_[object + 1]; ++k) {
      const Emitter& e = corners_[k];
      float3 p[3] = {e.p0, e.p1, e.p2};
      instance_points_to_world(&view, slot, p, 3u);
      total += triangle_area(p[0], p[1], p[2]);
      out.push_back({e.tri, total, slot, 0});
    }
  }
  return out;
}

}  // namespace tessera
