#pragma once
// Options of the `vct` render mode (voxel cone tracing, papers/001), shared by tessera-render,
// tessera-bench and the cluster: validation with one clear error line, conversion to the kernels'
// VctSettings, and the mode's lights for a packed scene.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "common/scene/packed_scene.h"
#include "kernels/vct/vct_shade.h"

namespace tessera {

inline constexpr uint32_t kVctDefaultGrid = 256;
inline constexpr int kVctDefaultPreset = 5;
inline constexpr float kVctDefaultShadowConeDegrees = 5.0f;

enum class VctOutput : uint32_t {
  color = TS_VCT_OUTPUT_COLOR,
  ao = TS_VCT_OUTPUT_AO,                     // cone-traced ambient occlusion, linear grey
  indirect = TS_VCT_OUTPUT_INDIRECT,         // only the diffuse indirect term
  ao_reference = TS_VCT_OUTPUT_AO_REFERENCE  // ambient occlusion from rays through the kd-tree, linear grey
};

// Fixed when a scene is loaded: changing them means voxelizing again.
struct VctOptions {
  uint32_t grid = kVctDefaultGrid;  // voxels per side
  bool solid = false;               // fill the inside of closed objects
};

// Per frame.
struct VctFrameSettings {
  int preset = kVctDefaultPreset;  // 1..5, the thesis's five configurations
  float shadow_cone_degrees = kVctDefaultShadowConeDegrees;
  VctOutput output = VctOutput::color;
  float ao_fraction = 0.125f;         // reach of the ambient occlusion, as a share of the grid's edge
  float cone_offset_voxels = 2.0f;    // cones start this many level-0 voxels along the normal
  float shadow_mix = 1.0f;            // i of Eq. 4.9
  float indirect_scale = 1.0f;
  bool indirect_normalize = true;     // a cone's radiance is the mean of what it passed (thesis §4.6)
  float side_lift = 0.5f;             // side cones' samples move this share of their distance along the normal
  uint32_t ao_reference_rays = 256;   // VctOutput::ao_reference
};

// Each throws Error naming the option, e.g. "--vct-grid 100 is not one of 64, 128, 256, 512".
void validate_vct_grid(uint32_t grid, const char* option = "--vct-grid");
void validate_vct_preset(int preset, const char* option = "--vct-preset");
void validate_shadow_cone(float degrees, const char* option = "--shadow-cone");
VctOutput parse_vct_output(const std::string& text);  // color | ao | indirect | ao-reference
const char* vct_output_name(VctOutput output);
const char* vct_preset_name(int preset);  // "basic shading", "+ hard shadows", ...

// The grid for a scene: `requested`, else the scene's own setting (manifest vct_grid), else 256.
uint32_t vct_grid_for_scene(const PackedScene& scene, std::optional<uint32_t> requested);

VctSettings make_vct_settings(const VctFrameSettings& frame, const VctGridParams& grid, uint32_t light_count);

// One warning line for scenes with mirror or glass materials ("" when there are none): the vct mode
// follows them by rays to the first diffuse surface, and the cones see them as diffuse occluders.
std::string vct_specular_warning(const PackedScene& scene);

// The mode's lights: the scene's point and directional lights, and one light per emissive material at
// the area-weighted centroid of its triangles (intensity = emission x area, two-sided cosine fall-off).
std::vector<VctLight> vct_lights_for_scene(const PackedScene& scene);
// Moves light `index`: a point or area light to `to`; a directional light to travel along `to`.
void move_vct_light(std::vector<VctLight>& lights, size_t index, const std::array<float, 3>& to);

}  // namespace tessera
