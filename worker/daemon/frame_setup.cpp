#include "worker/daemon/frame_setup.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/base/error.h"
#include "common/render/camera_setup.h"
#include "common/render/eye_view.h"
#include "common/render/jitter.h"
#include "common/render/shading_data.h"

namespace tessera::worker {

namespace {

// Eye `eye` of the request's explicit eye views, checked (Error names the eye).
EyeView requested_eye_view(const wire::FrameRequest& request, uint32_t eye) {
  const uint32_t eyes = request.eyes().layout() == wire::Eyes::STEREO ? 2 : 1;
  if (uint32_t(request.eye_views_size()) != eyes)
    throw Error("eye_views: " + std::to_string(request.eye_views_size()) + " given, but a " +
                (eyes == 2 ? "stereo frame needs 2 (left, right)" : "mono frame needs 1"));
  const wire::EyeView& v = request.eye_views(int(eye));
  EyeView view;
  view.pose.position = {v.position().x(), v.position().y(), v.position().z()};
  view.pose.orientation = {v.orientation().w(), v.orientation().x(), v.orientation().y(), v.orientation().z()};
  view.frustum = {v.frustum().left(), v.frustum().right(), v.frustum().bottom(), v.frustum().top()};
  return checked_eye_view(view, std::string("eye_views[") + std::to_string(eye) + "]" +
                                    (eyes == 2 ? (eye == 0 ? " (left)" : " (right)") : ""));
}

// The camera of the head pose, eye layout and projection (no explicit eye views).
CameraParams head_camera_for_eye(const wire::FrameRequest& request, uint32_t eye) {
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
    spec.frustum = Frustum{f.left(), f.right(), f.bottom(), f.top()};
    check_frustum(*spec.frustum, "the projection");
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

}  // namespace

CameraParams pixel_centre_camera_for_eye(const wire::FrameRequest& request, uint32_t eye) {
  const uint32_t width = request.image().width(), height = request.image().height();
  return request.eye_views_size() > 0 ? make_eye_camera(requested_eye_view(request, eye), width, height)
                                      : head_camera_for_eye(request, eye);
}

CameraParams camera_for_eye(const wire::FrameRequest& request, uint32_t eye) {
  const CameraParams camera = pixel_centre_camera_for_eye(request, eye);
  // pathtrace jitters every sample itself and keys its accumulation on the cameras.
  if (request.mode_case() == wire::FrameRequest::kPathtrace) return camera;
  return jittered_camera(camera, jitter_offset(request.aa_sample()));
}

std::optional<SunOverride> sun_override(const wire::FrameRequest& request) {
  if (!request.has_sun()) return std::nullopt;
  const auto& s = request.sun();
  return checked_sun_override({s.direction().x(), s.direction().y(), s.direction().z()},
                              {s.irradiance().x(), s.irradiance().y(), s.irradiance().z()});
}

AuxRequest aux_request(const wire::FrameRequest& request) {
  AuxRequest aux;
  if (!request.has_aux()) return aux;
  const wire::AuxOutputs& a = request.aux();
  aux.depth = a.depth();
  aux.depth_near = a.depth_near();
  aux.transparent = a.transparent();
  if (a.has_shadow_catcher_height()) aux.catcher_height = a.shadow_catcher_height();
  aux.shadow_opacity = a.shadow_opacity();
  return aux;
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

std::array<float, 2> gaze_of(const wire::FrameRequest& request) {
  if (!request.has_gaze()) return {0.5f, 0.5f};
  const float u = request.gaze().x(), v = request.gaze().y();
  if (!(u >= 0.0f && u <= 1.0f && v >= 0.0f && v <= 1.0f)) throw Error("the gaze point must lie in [0, 1] x [0, 1]");
  return {u, v};
}

RenderSettings pathtrace_render_settings(const wire::PathtraceParams& params, const PackedScene& scene) {
  RenderSettings s = default_pathtrace_settings(scene);
  if (params.has_max_depth()) {
    if (params.max_depth() > 32) throw Error("pathtrace max_depth above 32");
    s.max_depth = params.max_depth();
  }
  if (params.has_light_samples()) {
    if (params.light_samples() > 256) throw Error("pathtrace light_samples above 256");
    s.light_samples = params.light_samples();
  }
  if (params.exposure() != 0.0f) {
    if (!(params.exposure() > 0.0f && std::isfinite(params.exposure()))) throw Error("exposure must be positive");
    s.exposure = params.exposure();
  }
  if (params.seed() != 0) s.seed = params.seed();
  return s;
}

PathTraceSettings pathtrace_settings(const wire::PathtraceParams& params) {
  PathTraceSettings pt;
  switch (params.variant()) {
    case wire::PathtraceParams::VARIANT_UNSPECIFIED:
    case wire::PathtraceParams::PROPOSED: pt.variant = PtVariant::proposed; break;
    case wire::PathtraceParams::PLAIN: pt.variant = PtVariant::plain; break;
    default: throw Error("unknown pathtrace variant " + std::to_string(int(params.variant())));
  }
  if (params.spp() < 1 || params.spp() > (1u << 20)) throw Error("pathtrace spp must be 1..1048576");
  pt.spp = params.spp();
  if (params.launch_samples() > 4096) throw Error("pathtrace launch_samples above 4096");
  pt.launch_samples = params.launch_samples();  // 0: the renderer's automatic choice
  if (params.has_rr_depth()) {
    if (params.rr_depth() > 64) throw Error("pathtrace rr_depth above 64");
    pt.rr_depth = params.rr_depth();
  }
  if (params.has_depth_threshold()) {
    if (params.depth_threshold() > 64) throw Error("pathtrace depth_threshold above 64");
    pt.depth_threshold = params.depth_threshold();
  }
  if (params.has_p_max()) {
    if (!(params.p_max() >= 0.0f && params.p_max() <= 0.99f)) throw Error("pathtrace p_max must lie in [0, 0.99]");
    pt.p_max = params.p_max();
  }
  if (params.has_median_max_spp()) {
    if (params.median_max_spp() < 1 || params.median_max_spp() > (1u << 20)) throw Error("pathtrace median_max_spp must be 1..1048576");
    pt.median_max_samples = params.median_max_spp();
  }
  pt.reproject = !params.no_reproject();
  pt.gaze_stop = !params.no_gaze_stop();
  pt.median = !params.no_median();
  pt.stop_compensate = params.stop_compensate();
  pt.visibility_ray = params.visibility_ray();
  if (!(params.indirect_clamp() >= 0.0f && std::isfinite(params.indirect_clamp())))
    throw Error("pathtrace indirect_clamp must be >= 0");
  pt.indirect_clamp = params.indirect_clamp();
  return pt;
}

VctOptions vct_options(const wire::VctParams& params, const PackedScene& scene) {
  VctOptions o;
  if (params.grid() != 0) validate_vct_grid(params.grid(), "vct grid");
  o.grid = vct_grid_for_scene(scene, params.grid() != 0 ? std::optional<uint32_t>(params.grid()) : std::nullopt);
  o.solid = params.solid();
  return o;
}

VctFrameSettings vct_frame_settings(const wire::VctParams& params) {
  VctFrameSettings f;
  if (params.preset() != 0) {
    if (params.preset() > 5) throw Error("vct preset " + std::to_string(params.preset()) + " is not one of 1..5");
    f.preset = int(params.preset());
  }
  if (params.shadow_cone_degrees() != 0.0f) f.shadow_cone_degrees = params.shadow_cone_degrees();
  validate_vct_preset(f.preset, "vct preset");
  validate_shadow_cone(f.shadow_cone_degrees, "vct shadow cone");
  switch (params.output()) {
    case wire::VctParams::OUTPUT_UNSPECIFIED:
    case wire::VctParams::COLOR: f.output = VctOutput::color; break;
    case wire::VctParams::AO: f.output = VctOutput::ao; break;
    case wire::VctParams::INDIRECT: f.output = VctOutput::indirect; break;
    case wire::VctParams::AO_REFERENCE: f.output = VctOutput::ao_reference; break;
    default: throw Error("unknown vct output " + std::to_string(int(params.output())));
  }
  if (params.has_cone_offset_voxels()) {
    if (!(params.cone_offset_voxels() >= 0.0f && params.cone_offset_voxels() <= 8.0f))
      throw Error("vct cone offset must be in 0..8 voxels");
    f.cone_offset_voxels = params.cone_offset_voxels();
  }
  return f;
}

RenderSettings vct_render_settings(const wire::VctParams& params, const PackedScene& scene) {
  RenderSettings s = default_render_settings(scene);
  if (params.exposure() != 0.0f) {
    if (!(params.exposure() > 0.0f && std::isfinite(params.exposure()))) throw Error("exposure must be positive");
    s.exposure = params.exposure();
  }
  return s;
}

}  // namespace tessera::worker
