#include "common/render/vct_options.h"

#include <cmath>

#include "common/base/error.h"
#include "common/base/usage_error.h"

namespace tessera {
namespace {

std::string number(float x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", double(x));
  return buffer;
}

}  // namespace

void validate_vct_grid(uint32_t grid, const char* option) {
  if (grid != 64 && grid != 128 && grid != 256 && grid != 512)
    throw UsageError(std::string(option) + " " + std::to_string(grid) + " is not one of 64, 128, 256, 512");
}

void validate_vct_preset(int preset, const char* option) {
  if (preset < 1 || preset > 5)
    throw UsageError(std::string(option) + " " + std::to_string(preset) +
                " is not 1..5 (1 basic shading, 2 + hard shadows, 3 + AO, 4 + diffuse GI, 5 + cone-traced soft shadows)");
}

void validate_shadow_cone(float degrees, const char* option) {
  if (!(degrees >= 2.5f && degrees <= 10.0f))
    throw UsageError(std::string(option) + " " + number(degrees) + " is outside 2.5..10 degrees");
}

VctOutput parse_vct_output(const std::string& text) {
  if (text == "color") return VctOutput::color;
  if (text == "ao") return VctOutput::ao;
  if (text == "indirect") return VctOutput::indirect;
  if (text == "ao-reference") return VctOutput::ao_reference;
  throw UsageError("--vct-output '" + text + "' is not one of color, ao, indirect, ao-reference");
}

const char* vct_output_name(VctOutput output) {
  switch (output) {
    case VctOutput::color: return "color";
    case VctOutput::ao: return "ao";
    case VctOutput::indirect: return "indirect";
    case VctOutput::ao_reference: return "ao-reference";
  }
  return "?";
}

const char* vct_preset_name(int preset) {
  switch (preset) {
    case 1: return "basic shading";
    case 2: return "+ hard shadows";
    case 3: return "+ ambient occlusion";
    case 4: return "+ diffuse GI";
    case 5: return "+ cone-traced soft shadows";
  }
  return "?";
}

uint32_t vct_grid_for_scene(const PackedScene& scene, std::optional<uint32_t> requested) {
  if (requested) {
    validate_vct_grid(*requested);
    return *requested;
  }
  const uint32_t own = scene.manifest().vct_grid();
  if (own != 0) {
    validate_vct_grid(own);
    return own;
  }
  return kVctDefaultGrid;
}

VctSettings make_vct_settings(const VctFrameSettings& f, const VctGridParams& grid, uint32_t light_count) {
  validate_vct_preset(f.preset);
  validate_shadow_cone(f.shadow_cone_degrees);
  VctSettings s{};
  s.preset = uint32_t(f.preset);
  s.light_count = light_count;
  s.output = uint32_t(f.output);
  s.ao_reference_rays = f.ao_reference_rays;
  s.shadow_sin_half = float(std::sin(double(f.shadow_cone_degrees) * 0.5 * M_PI / 180.0));
  s.ao_distance = f.ao_fraction * grid.voxel_size * float(grid.resolution);
  s.cone_offset = f.cone_offset_voxels * grid.voxel_size;
  s.shadow_mix = f.shadow_mix;
  s.indirect_scale = f.indirect_scale;
  s.indirect_normalize = f.indirect_normalize ? 1u : 0u;
  s.side_lift = f.side_lift;
  return s;
}

std::string vct_specular_warning(const PackedScene& scene) {
  int mirrors = 0, glasses = 0;
  for (const auto& m : scene.manifest().materials()) {
    mirrors += m.type() == tpk::MIRROR;
    glasses += m.type() == tpk::GLASS;
  }
  if (mirrors + glasses == 0) return "";
  return "warning: vct: " + std::to_string(mirrors) + " mirror and " + std::to_string(glasses) +
         " glass material(s) are approximated: rays follow them to the first diffuse surface (glass: the stronger "
         "Fresnel lobe only), while the cones' shadows and indirect light treat them as diffuse surfaces";
}

std::vector<VctLight> vct_lights_for_scene(const PackedScene& scene) {
  std::vector<VctLight> lights;
  const auto& m = scene.manifest();
  for (const auto& l : m.point_lights()) {
    VctLight v{};
    v.type = TS_VCT_LIGHT_POINT;
    v.x = l.position().x();
    v.y = l.position().y();
    v.z = l.position().z();
    v.r = l.intensity().x();
    v.g = l.intensity().y();
    v.b = l.intensity().z();
    lights.push_back(v);
  }
  for (const auto& l : m.directional_lights()) {
    const double x = l.direction().x(), y = l.direction().y(), z = l.direction().z(), len = std::sqrt(x * x + y * y + z * z);
    if (len == 0) continue;
    VctLight v{};
    v.type = TS_VCT_LIGHT_DIRECTIONAL;
    v.x = float(x / len);
    v.y = float(y / len);
    v.z = float(z / len);
    v.r = l.radiance().x();
    v.g = l.radiance().y();
    v.b = l.radiance().z();
    lights.push_back(v);
  }
  // One light per emissive material: area-weighted centroid and mean normal of its triangles.
  const SceneView view = scene.host_view();
  const auto runs = scene.section_as<uint32_t>(tpk::MATERIAL_RUNS);
  for (int material = 0; material < m.materials_size(); ++material) {
    const auto& mat = m.materials(material);
    if (mat.type() != tpk::EMISSIVE) continue;
    double area = 0, c[3] = {0, 0, 0}, n[3] = {0, 0, 0};
    for (size_t r = 0; r + 1 < runs.size(); r += 2) {
      if (runs[r + 1] != uint32_t(material)) continue;
      const uint32_t end = r + 2 < runs.size() ? runs[r + 2] : scene.triangle_count();
      for (uint32_t t = runs[r]; t < end; ++t) {
        float3 p0, p1, p2;
        scene_triangle_vertices(&view, t, &p0, &p1, &p2);
        const float3 cr = v3_cross(v3_sub(p1, p0), v3_sub(p2, p0));
        const double a = 0.5 * v3_length(cr);
        if (!(a > 0)) continue;
        area += a;
        c[0] += a * (p0.x + p1.x + p2.x) / 3;
        c[1] += a * (p0.y + p1.y + p2.y) / 3;
        c[2] += a * (p0.z + p1.z + p2.z) / 3;
        // Normals of one emitter may be wound either way; align them with the first one.
        double nx = cr.x, ny = cr.y, nz = cr.z;
        if (nx * n[0] + ny * n[1] + nz * n[2] < 0) nx = -nx, ny = -ny, nz = -nz;
        n[0] += 0.5 * nx;
        n[1] += 0.5 * ny;
        n[2] += 0.5 * nz;
      }
    }
    if (!(area > 0)) continue;
    VctLight v{};
    v.type = TS_VCT_LIGHT_AREA;
    v.x = float(c[0] / area);
    v.y = float(c[1] / area);
    v.z = float(c[2] / area);
    v.r = float(mat.emission().x() * area);
    v.g = float(mat.emission().y() * area);
    v.b = float(mat.emission().z() * area);
    const auto& bb = m.bounds();
    const double dx = bb.max().x() - bb.min().x(), dy = bb.max().y() - bb.min().y(), dz = bb.max().z() - bb.min().z();
    v.cone_lift = float(0.02 * std::sqrt(dx * dx + dy * dy + dz * dz));
    const double nl = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (nl > 0.5 * area) {  // a flat emitter: cosine fall-off; a scattered one radiates evenly
      v.nx = float(n[0] / nl);
      v.ny = float(n[1] / nl);
      v.nz = float(n[2] / nl);
    } else {
      v.type = TS_VCT_LIGHT_POINT;
      v.r *= 0.5f;  // mean of |cos| over the sphere
      v.g *= 0.5f;
      v.b *= 0.5f;
    }
    lights.push_back(v);
  }
  return lights;
}

void move_vct_light(std::vector<VctLight>& lights, size_t index, const std::array<float, 3>& to) {
  if (index >= lights.size())
    throw Error("no light " + std::to_string(index) + " to move (the scene has " + std::to_string(lights.size()) + ")");
  VctLight& l = lights[index];
  if (l.type == TS_VCT_LIGHT_DIRECTIONAL) {
    const double len = std::sqrt(double(to[0]) * to[0] + double(to[1]) * to[1] + double(to[2]) * to[2]);
    if (!(len > 0)) throw Error("a directional light needs a non-zero direction");
    l.x = float(to[0] / len);
    l.y = float(to[1] / len);
    l.z = float(to[2] / len);
  } else {
    l.x = to[0];
    l.y = to[1];
    l.z = to[2];
  }
}

}  // namespace tessera
