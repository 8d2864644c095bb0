#pragma once
// Stereo views for VR: two eyes offset by the IPD along the head's right vector, sharing the
// head's orientation and projection (so a tile is the same rectangle in both eye images), the
// default IPD from the scene's scale, the gaze point, and the side-by-side composite the master
// shows.
#include <array>

#include "common/image/image.h"
#include "common/render/camera_setup.h"
#include "tpk.pb.h"

namespace tessera {

constexpr float kDefaultIpdMetres = 0.064f;

struct StereoCameras {
  CameraParams left{}, right{};
};

// Eyes at -ipd/2 (left) and +ipd/2 (right) along the pose's right vector. Throws Error when ipd < 0.
StereoCameras make_stereo_cameras(const CameraSpec& head, float ipd, uint32_t width, uint32_t height);

// 0.064 scene units times the scene's scale (Manifest.scene_scale, 1 when unset).
float default_ipd(const tpk::Manifest& manifest);

// "U,V" in [0, 1] image coordinates (0, 0 = top left). Throws Error naming `what` otherwise.
std::array<float, 2> parse_gaze(const std::string& text, const std::string& what = "--gaze");

// The left image, then the right one, side by side (same heights).
ImageRgba8 side_by_side(const ImageRgba8& left, const ImageRgba8& right);

}  // namespace tessera
