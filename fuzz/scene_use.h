#pragma once
// What a worker does with a scene that passed validation, on the host: shading data, the surface
// and albedo (texture lookups) of triangles, and rays through the kd-tree from the camera and the
// box's centre. A validation gap shows up here as an out-of-bounds read under AddressSanitizer.
#include <algorithm>

#include "common/render/shading_data.h"
#include "common/scene/packed_scene.h"
#include "kernels/shading/surface.h"

namespace tessera::fuzz {

inline void use_scene(const PackedScene& scene) {
  const SceneView view = scene.host_view();
  const ShadingData shading = ShadingData::build(scene);
  const ShadingContext ctx = shading.host_context();
  const uint32_t step = std::max(1u, scene.triangle_count() / 512);
  for (uint32_t tri = 0; tri < scene.triangle_count(); tri += step)
    for (float u : {0.0f, 0.25f, 1.0f}) {
      Hit hit{};  // value-initialised: an instanced scene's `inst` is its first instance
      hit.tri = tri, hit.t = 1.0f, hit.u = u;
      const Surface surface = surface_at(&view, &ctx, make_float3(0.0f, 0.0f, -1.0f), &hit);
      (void)surface_albedo(&ctx, &surface);
      (void)scene.material_of(tri);
    }
  const auto& b = scene.manifest().bounds();
  const float3 centre = make_float3(0.5f * (b.min().x() + b.max().x()), 0.5f * (b.min().y() + b.max().y()),
                                    0.5f * (b.min().z() + b.max().z()));
  const auto& c = scene.manifest().camera();
  const float3 origins[2] = {centre, make_float3(c.position().x(), c.position().y(), c.position().z())};
  const float3 directions[7] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}, {0.48f, -0.6f, 0.64f}};
  for (const float3& o : origins)
    for (const float3& d : directions) {
      Hit hit;
      if (kd_intersect_closest(&view, o, d, 0.0f, 1e30f, &hit)) {
        const Surface surface = surface_at(&view, &ctx, d, &hit);
        (void)surface_albedo(&ctx, &surface);
      }
      (void)kd_intersect_any(&view, o, d, 0.0f, 1e30f);
    }
}

}  // namespace tessera::fuzz
