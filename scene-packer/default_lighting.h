#pragma once
// Light for a scene that brings none (no point or directional light, no emissive triangle), so its
// first render is not black: a warm sun from above the front-right (the side the default camera
// looks from) and the sky as ambient light (tpk Manifest.sky_ambient: raytrace's ambient share,
// pathtrace's environment).
#include <string>

#include "common/scene/triangle_mesh.h"
#include "tpk.pb.h"

namespace tessera::pack {

struct DefaultLighting {
  tpk::DirectionalLight sun;
  float sky_ambient = 0;
};

DefaultLighting default_lighting();

// Whether the scene lights itself: lights of its own or a triangle with an emissive material.
bool scene_has_lights(const TriangleMesh& mesh, size_t point_lights, size_t directional_lights);

// The one line tessera-pack prints when it adds them.
std::string describe(const DefaultLighting& lighting);

}  // namespace tessera::pack
