#pragma once
// The eyes a live frame is rendered with, exactly: what the page reprojects from. A page either
// gives its eyes (XR `views`) or a head pose that the session's field of view, image size and
// interpupillary distance turn into eyes (the workers' head camera, common/render/stereo.h, written
// out as explicit views). The guard band renders every eye wider than asked on every side, so a
// page that reprojects the frame to a head that turned meanwhile still has pixels at the edges;
// the image grows with it, keeping the pixels per tangent unit the page asked for.
#include <array>
#include <cstdint>
#include <vector>

#include "common/render/eye_view.h"
#include "master/pose/pose_sample.h"

namespace tessera::master {

inline constexpr float kMaxGuardBandDegrees = 20.0f;

struct RenderedEyes {
  std::vector<EyeView> views;      // one per eye as rendered (stereo: left, right)
  uint32_t width = 0, height = 0;  // per eye, the guard band's rows and columns included
  float guard_band_degrees = 0;    // applied on every side (0: the eyes as asked)
  bool explicit_views = false;     // the workers get `views` as FrameRequest.eye_views
  std::vector<Frustum> asked;      // each eye's frustum as the page asked for it

  // A point of the asked image ([0, 1], 0, 0 top left; the gaze) in the rendered image.
  std::array<float, 2> rendered_point(const std::array<float, 2>& asked_point) const;
};

struct EyeRequest {
  uint32_t width = 0, height = 0;  // per eye, as the page asked
  float vertical_fov_degrees = 60;  // head poses
  bool stereo = false;
  float ipd = 0;                   // head poses in stereo, scene units
  float guard_band_degrees = 0;    // 0 .. kMaxGuardBandDegrees
  // Every worker given the frame renders explicit eye views: a head pose may be widened (it goes
  // out as eye views). XR views always go out as eye views.
  bool eye_views_allowed = false;
};

// The eyes of `pose` (its XR views, else its head pose) with the guard band applied where it can be.
RenderedEyes rendered_eyes(const PoseSample& pose, const EyeRequest& request);

// The head camera's eyes: at -ipd/2 and +ipd/2 along the pose's right vector in stereo, the
// pose's orientation, a symmetric frustum of the vertical field of view and the image's aspect.
std::vector<EyeView> head_eye_views(const Pose& head, float vertical_fov_degrees, uint32_t width, uint32_t height, bool stereo,
                                    float ipd);

// Each edge's angle moved `degrees` outwards (edges stay within 89 degrees of the axis, an edge
// already beyond stays as it is).
Frustum widened_frustum(const Frustum& frustum, float degrees);

}  // namespace tessera::master
