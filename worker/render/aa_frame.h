#pragma once
// An anti-aliased frame of one or two eyes on this machine (tessera-render --aa N, raytrace and
// vct): sample k renders every eye through cameras shifted by jitter_offset(k), the eyes side by
// side (left, right), and the N sample images are averaged in linear light (LinearMean). It is
// the image a master's SampleAccumulator holds after adding the cluster's frames of aa_sample
// 0..N-1, bit for bit, because both average the same 8-bit samples the same way.
#include <functional>
#include <vector>

#include "common/image/image.h"
#include "kernels/render/camera.h"

namespace tessera {

// Renders one eye's whole image with the given (jittered) camera.
using EyeRenderer = std::function<ImageRgba8(const CameraParams& camera)>;

// eyes: 1 (mono) or 2 (stereo); samples >= 1 (1: no jitter, no averaging). Throws Error otherwise.
ImageRgba8 render_aa_frame(const std::vector<CameraParams>& eyes, uint32_t samples, const EyeRenderer& render_eye);

}  // namespace tessera
