#pragma once
// WebXR / OpenXR eye views to the renderer's EyeView. A page gets, per eye, XRView.transform (the
// eye's pose: a rigid transform, column-major 4x4, the eye looking down -z with +y up) and
// XRView.projectionMatrix (a column-major OpenGL-style perspective projection). The frustum's
// tangents at unit distance follow from the projection alone, whatever its near and far planes:
//   left = (m8 - 1) / m0, right = (m8 + 1) / m0, bottom = (m9 - 1) / m5, top = (m9 + 1) / m5.
#include <array>

#include "common/render/eye_view.h"

namespace tessera {

// Throws Error when the transform is not a rotation plus translation (within 1 %), the projection
// is not a perspective projection, or the resulting view fails checked_eye_view.
EyeView eye_view_from_xr(const std::array<float, 16>& transform, const std::array<float, 16>& projection);

}  // namespace tessera
