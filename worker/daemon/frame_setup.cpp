#include "worker/daemon/frame_setup.h"

#include <cmath>

#include "common/base/error.h"
#include "common/render/camera_setup.h"
#include "common/render/shading_data.h"

namespace tessera::worker {

CameraParams camera_for_eye(const wire::FrameRequest& request, uint32_t eye) {
  const auto& p = request.pose();
  CameraSpec spec;
  spec.pose.position = {p.position().x(), p.position().y(), p.position().z()};
  spec.pose.orientation = {p.orientation().w(), p.orientation().x(), p.orientation().y(), p.orientation().z()};
  const auto& q = spec.pose.orientation;
  const float norm = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (!(std::fabs(norm - 1.0f) <= 0.01f)) throw Error("the pose's quaternion is not a rotation (norm " + std::to_string(norm) + ")");
  for (float v : spec.pose.position)
    if (!std::isfinite(v)) throw Error("the pose's position is not finite");
  const auto& projection = request.projection();
  if (projection.has_frustum()) {
    const auto& f = projection.frustum();
    if (!(f.left() < f.right() && f.bottom() < f.top())) throw Error("empty frustum");
    spec.frustum = Frustum{f.left(), f.right(), f.bottom(), f.top()};
  } else {
    spec.vertical_fov_degrees = projection.vertical_fov_degrees();
  }
  if (request.eyes().layout() == wire::Eyes::STEREO) {
    const float ipd = request.eyes().ipd();
    if (!(ipd >= 0.0f && std::isfinite(ipd))) throw Error("bad interpupillary distance");
    spec.eye_offset = eye == 0 ? -0.5f * ipd : 0.5f * ipd;
  }
  return make_camera(spec, request.image().width(), request.image().height());
}

RenderSettings raytrace_settings(const wire::RaytraceParams& params, const PackedScene& scene) {
  RenderSettings s = default_render_settings(scene);
  if (params.max_depth() > 32) throw Error("max_depth above 32");
  if (params.light_samples() > 256) throw Error("light_samples above 256");
  s.max_depth = params.max_depth();
  s.light_samples = params.light_samples();
  if (params.exposure() != 0.0f) {
    if (!(params.exposure() > 0.0f && std::isfinite(params.exposure()))) throw Error("exposure must be positive");
    s.exposure = params.exposure();
  }
  if (params.seed() != 0) s.seed = params.seed();
  return s;
}

}  // namespace tessera::worker
