#pragma once
// The shading inputs of a packed scene in the kernels' layout (materials, textures, lights,
// emissive triangles, colour tables), built once on the host and used by both the CPU reference
// renderer and the OpenCL device buffers.
#include <span>
#include <vector>

#include "common/scene/packed_scene.h"
#include "kernels/shading/shading_context.h"

namespace tessera {

struct ShadingData {
  std::vector<MaterialGpu> materials;
  std::vector<TextureGpu> textures;
  std::span<const uint32_t> texels;     // RGBA8 words, in the packed scene
  std::span<const uint32_t> material_runs;
  std::vector<LightGpu> lights;
  std::vector<EmitterGpu> emitters;
  std::vector<float> srgb_to_linear;            // 256 entries
  std::vector<float> linear_to_srgb_threshold;  // 255 entries

  static ShadingData build(const PackedScene& scene);
  // Pointers into this object's vectors: valid while it lives and is not modified.
  ShadingContext host_context() const;
};

// Scalars of the scene view, for kernels (the pointers are separate arguments).
SceneConstants scene_constants(const SceneView& view);

// Defaults that depend on the scene: ray offset from its size.
RenderSettings default_render_settings(const PackedScene& scene);

}  // namespace tessera
