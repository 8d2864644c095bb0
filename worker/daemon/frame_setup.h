#pragma once
// A FrameRequest turned into what the kernels take: one camera per eye for the full image
// (so each tile, rendered alone, has exactly the pixels of a whole-frame render) and the
// render settings on top of the scene's defaults.
#include "common/scene/packed_scene.h"
#include "kernels/render/camera.h"
#include "kernels/shading/shading_context.h"
#include "wire.pb.h"

namespace tessera::worker {

// Throws Error on an invalid pose, projection or eye layout.
CameraParams camera_for_eye(const wire::FrameRequest& request, uint32_t eye);
RenderSettings raytrace_settings(const wire::RaytraceParams& params, const PackedScene& scene);

}  // namespace tessera::worker
