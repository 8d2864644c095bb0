#pragma once
// Small scenes of generated shapes for the depth, coverage and sun tests, packed in the test, and
// the camera that looks straight down on them.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "kernels/render/camera.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"

namespace tessera::testing {

// A unit sphere resting on y = 0 at the origin, no floor, lit by a sun travelling along +x and
// down at 45 degrees, over a shadow catcher y = 0 of opacity 0.8: its shadow on the ground is an
// ellipse centred at (1, 0, 0).
inline constexpr const char* kSphereScene =
    "camera { position { x: 0 y: 10 z: 0 } qw: 0.70710678 qx: -0.70710678 vertical_fov_degrees: 33.398488 }\n"
    "add_materials { name: \"white\" diffuse { x: 0.8 y: 0.8 z: 0.8 } }\n"
    "sphere { center { x: 0 y: 1 z: 0 } radius: 1 subdivisions: 3 material: \"white\" }\n"
    "directional_lights { direction { x: 1 y: -1 z: 0 } radiance { x: 2 y: 2 z: 2 } }\n"
    "shadow_catcher { height: 0 opacity: 0.8 }\n";

// A floor (top at y = 0) with a box on it whose top is y = 1, |x|, |z| <= 0.5.
inline constexpr const char* kBoxScene =
    "camera { position { x: 0 y: 10 z: 0 } qw: 0.70710678 qx: -0.70710678 vertical_fov_degrees: 33.398488 }\n"
    "add_materials { name: \"grey\" diffuse { x: 0.5 y: 0.5 z: 0.5 } }\n"
    "box { min { x: -4 y: -1 z: -4 } max { x: 4 y: 0 z: 4 } material: \"grey\" }\n"
    "box { min { x: -0.5 y: 0 z: -0.5 } max { x: 0.5 y: 1 z: 0.5 } material: \"grey\" }\n"
    "directional_lights { direction { x: 0.3 y: -1 z: 0.2 } radiance { x: 2 y: 2 z: 2 } }\n";

// The scenes' camera pose for --pose and the wire (px,py,pz,qw,qx,qy,qz) and its vertical field of view.
inline constexpr const char* kDownPose = "0,10,0,0.70710678,-0.70710678,0,0";
inline constexpr float kDownFov = 33.398488f;  // 2 atan(0.3): the frustum's tangents are +-0.3

// Packs settings `text` (shapes only) as dir/name.tpk.
inline std::filesystem::path pack_shapes(const std::filesystem::path& dir, const std::string& name, const std::string& text) {
  const auto settings = dir / (name + ".scene.txtpb");
  write_text(settings, text);
  pack::PackOptions o;
  o.input = settings;
  o.output = dir / (name + ".tpk");
  o.show_progress = false;
  o.zstd_level = 1;
  pack::pack_scene(o);
  return o.output;
}

// The camera at (0, 10, 0) looking down -y, image up along -z, tangents +-0.3: the world point
// (x, 0, z) lies at image position ((x / 10 + 0.3) / 0.6, (z / 10 + 0.3) / 0.6) x size.
inline CameraParams down_camera(uint32_t size) {
  CameraParams c{};
  c.pos_y = 10;
  c.right_x = 1;
  c.up_z = -1;
  c.fwd_y = -1;
  c.left = -0.3f;
  c.right = 0.3f;
  c.bottom = -0.3f;
  c.top = 0.3f;
  c.width = c.height = size;
  return c;
}

// The pixel of down_camera(size) that sees the ground point (x, 0, z).
inline size_t down_pixel(uint32_t size, float x, float z) {
  const auto px = uint32_t((x / 10.0f + 0.3f) / 0.6f * float(size)), py = uint32_t((z / 10.0f + 0.3f) / 0.6f * float(size));
  return size_t(py) * size + px;
}

// q of a hit at depth z: round(65535 min(1, near / z)).
inline int expected_inverse_depth(float near, float z) { return int(std::lround(65535.0 * std::min(1.0, double(near) / z))); }

}  // namespace tessera::testing
