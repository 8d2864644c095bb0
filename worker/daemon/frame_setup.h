#pragma once
// A FrameRequest turned into what the kernels take: one camera per eye for the full image
// (so each tile, rendered alone, has exactly the pixels of a whole-frame render) and the
// render settings on top of the scene's defaults.
#include <array>

#include "common/render/aux_outputs.h"
#include "common/render/sun_override.h"
#include "common/render/vct_options.h"
#include "common/scene/packed_scene.h"
#include "kernels/render/camera.h"
#include "kernels/shading/shading_context.h"
#include "worker/render/pathtrace_renderer.h"
#include "wire.pb.h"

namespace tessera::worker {

// The camera of eye `eye` (0: left or mono, 1: right) for the whole image: the request's explicit
// eye view when it has eye_views, else the head pose moved by -+ipd/2 with the request's
// projection; raytrace and vct rays shifted by the sub-pixel offset of aa_sample. Throws Error on
// an invalid pose, projection, eye view or eye layout.
CameraParams camera_for_eye(const wire::FrameRequest& request, uint32_t eye);
// The same camera without aa_sample's jitter: the aux pass traces through pixel centres in every
// mode and sample.
CameraParams pixel_centre_camera_for_eye(const wire::FrameRequest& request, uint32_t eye);
// The request's sun (FrameRequest.sun, checked and normalised), none when it has none. Throws Error
// as checked_sun_override does.
std::optional<SunOverride> sun_override(const wire::FrameRequest& request);

// The request's depth and coverage outputs (any() false: none). aux_settings checks them.
AuxRequest aux_request(const wire::FrameRequest& request);

RenderSettings raytrace_settings(const wire::RaytraceParams& params, const PackedScene& scene);

// The request's gaze point in [0, 1] image coordinates; the image centre when it has none.
std::array<float, 2> gaze_of(const wire::FrameRequest& request);

// pathtrace: the scene's path-tracing defaults with the request's overrides (as tessera-render
// --mode pathtrace builds them), and the mode's own settings.
RenderSettings pathtrace_render_settings(const wire::PathtraceParams& params, const PackedScene& scene);
PathTraceSettings pathtrace_settings(const wire::PathtraceParams& params);

// vct: what the grid is built with (grid size, solid), the per-frame settings and the render
// settings (as tessera-render --mode vct builds them).
VctOptions vct_options(const wire::VctParams& params, const PackedScene& scene);
VctFrameSettings vct_frame_settings(const wire::VctParams& params);
RenderSettings vct_render_settings(const wire::VctParams& params, const PackedScene& scene);

}  // namespace tessera::worker
