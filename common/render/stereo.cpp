#include "common/render/stereo.h"

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "common/base/error.h"
#include "common/base/usage_error.h"

namespace tessera {

StereoCameras make_stereo_cameras(const CameraSpec& head, float ipd, uint32_t width, uint32_t height) {
  if (!(ipd >= 0.0f) || !std::isfinite(ipd)) throw Error("the IPD must be a finite number >= 0");
  CameraSpec eye = head;
  StereoCameras cams;
  eye.eye_offset = head.eye_offset - 0.5f * ipd;
  cams.left = make_camera(eye, width, height);
  eye.eye_offset = head.eye_offset + 0.5f * ipd;
  cams.right = make_camera(eye, width, height);
  return cams;
}

float default_ipd(const tpk::Manifest& manifest) {
  const float scale = manifest.scene_scale() > 0.0f ? manifest.scene_scale() : 1.0f;
  return kDefaultIpdMetres * scale;
}

std::array<float, 2> parse_gaze(const std::string& text, const std::string& what) {
  std::vector<float> v;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    char* end = nullptr;
    const float f = std::strtof(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !std::isfinite(f))
      throw UsageError("bad " + what + " '" + text + "': expected U,V in [0, 1]");
    v.push_back(f);
  }
  if (v.size() != 2 || v[0] < 0.0f || v[0] > 1.0f || v[1] < 0.0f || v[1] > 1.0f)
    throw UsageError("bad " + what + " '" + text + "': expected U,V in [0, 1]");
  return {v[0], v[1]};
}

ImageRgba8 side_by_side(const ImageRgba8& left, const ImageRgba8& right) {
  if (left.height() != right.height()) throw Error("side_by_side: the eye images differ in height");
  ImageRgba8 out(left.width() + right.width(), left.height());
  composite_tile(out, 0, 0, left);
  composite_tile(out, left.width(), 0, right);
  return out;
}

}  // namespace tessera
