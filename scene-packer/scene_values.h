#pragma once
// The numbers a scene brings besides its vertices — lights, materials, the camera — checked before
// packing: a light at 1e39 (beyond float) or a colour of NaN packs into a scene whose every shaded
// pixel turns black or saturates, so they are refused with one line naming what holds them.
#include <string>

#include "common/scene/triangle_mesh.h"

namespace tessera::pack {

// Throws Error (prefixed with `name`) at the first light, material or camera value that is not
// finite, or a colour, light power or index of refraction that is negative (or zero, for the index).
void check_scene_values(const TriangleMesh& mesh, const std::string& name);

}  // namespace tessera::pack
