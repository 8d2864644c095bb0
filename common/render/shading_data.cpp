#include "common/render/shading_data.h"

#include <cmath>

#include "common/image/image.h"

namespace tessera {
namespace {

float scene_triangle_area(const SceneView& view, uint32_t tri) {
  float3 p0, p1, p2;
  scene_triangle_vertices(&view, tri, &p0, &p1, &p2);
  return triangle_area(p0, p1, p2);
}

}  // namespace

ShadingData ShadingData::build(const PackedScene& scene) {
  ShadingData d;
  const auto& m = scene.manifest();
  for (const auto& src : m.materials()) {
    MaterialGpu g{};
    g.diffuse_r = src.diffuse().x();
    g.diffuse_g = src.diffuse().y();
    g.diffuse_b = src.diffuse().z();
    g.emission_r = src.emission().x();
    g.emission_g = src.emission().y();
    g.emission_b = src.emission().z();
    g.ior = src.ior() > 0 ? src.ior() : 1.5f;
    g.texture = src.texture();
    g.type = uint32_t(src.type());
    g.texcoord_scale = std::ldexp(1.0f, -int(16 - std::max(1u, src.texcoord_integer_bits())));
    d.materials.push_back(g);
  }
  for (const auto& src : m.textures())
    d.textures.push_back({uint32_t(src.texel_offset()), src.width(), src.height(),
                          src.has_alpha_mask() ? TS_TEXTURE_HAS_ALPHA : 0u, texture_levels(src), 0, 0, 0});
  d.texels = scene.section_as<uint32_t>(tpk::TEXELS);
  d.material_runs = scene.section_as<uint32_t>(tpk::MATERIAL_RUNS);
  for (const auto& l : m.point_lights())
    d.lights.push_back({TS_LIGHT_POINT, l.position().x(), l.position().y(), l.position().z(), l.intensity().x(),
                        l.intensity().y(), l.intensity().z(), 0});
  for (const auto& l : m.directional_lights()) {
    float dir[3] = {l.direction().x(), l.direction().y(), l.direction().z()};
    const float len = std::sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
    if (len == 0) continue;
    d.lights.push_back({TS_LIGHT_DIRECTIONAL, dir[0] / len, dir[1] / len, dir[2] / len, l.radiance().x(), l.radiance().y(),
                        l.radiance().z(), 0});
  }
  // Emissive triangles, with the running sum of their areas for sampling.
  const SceneView view = scene.host_view();
  const auto runs = d.material_runs;
  float total = 0.0f;
  for (size_t r = 0; r < runs.size(); r += 2) {
    if (d.materials[runs[r + 1]].type != TS_MATERIAL_EMISSIVE) continue;
    const uint32_t end = r + 2 < runs.size() ? runs[r + 2] : scene.triangle_count();
    for (uint32_t t = runs[r]; t < end; ++t) {
      total += scene_triangle_area(view, t);
      d.emitters.push_back({t, total, 0, 0});
    }
  }
  d.srgb_to_linear.resize(256);
  for (int i = 0; i < 256; ++i) d.srgb_to_linear[i] = float(::tessera::srgb_to_linear(i / 255.0));
  // Code i+1 starts halfway (in sRGB space) between codes i and i+1.
  d.linear_to_srgb_threshold.resize(255);
  for (int i = 0; i < 255; ++i) d.linear_to_srgb_threshold[i] = float(::tessera::srgb_to_linear((i + 0.5) / 255.0));
  return d;
}

ShadingContext ShadingData::host_context() const {
  ShadingContext c{};
  c.materials = materials.data();
  c.material_runs = material_runs.data();
  c.material_run_count = uint32_t(material_runs.size() / 2);
  c.textures = textures.data();
  c.texels = texels.data();
  c.lights = lights.data();
  c.light_count = uint32_t(lights.size());
  c.emitters = emitters.data();
  c.emitter_count = uint32_t(emitters.size());
  c.color.srgb_to_linear = srgb_to_linear.data();
  c.color.linear_to_srgb_threshold = linear_to_srgb_threshold.data();
  return c;
}

SceneConstants scene_constants(const SceneView& v) {
  return {v.flags,        v.triangle_count, v.bounds_min_x, v.bounds_min_y, v.bounds_min_z, v.bounds_max_x,
          v.bounds_max_y, v.bounds_max_z,   v.anchor_x,     v.anchor_y,     v.anchor_z,     v.cell_size,
          v.position_step};
}

RenderSettings default_render_settings(const PackedScene& scene) {
  const auto& b = scene.manifest().bounds();
  const float dx = b.max().x() - b.min().x(), dy = b.max().y() - b.min().y(), dz = b.max().z() - b.min().z();
  RenderSettings s{};
  s.max_depth = 6;
  s.light_samples = 4;
  s.seed = 1;
  s.texture_lod = 1;
  s.ambient = scene.manifest().sky_ambient() > 0.0f ? scene.manifest().sky_ambient() : 0.04f;
  s.background_r = 0.55f;
  s.background_g = 0.65f;
  s.background_b = 0.8f;
  s.ray_epsilon = 2e-5f * std::sqrt(dx * dx + dy * dy + dz * dz);
  s.exposure = 1.0f;
  return s;
}

}  // namespace tessera
