#include "worker/render/aa_frame.h"

#include "common/base/error.h"
#include "common/image/linear_mean.h"
#include "common/render/jitter.h"
#include "common/render/stereo.h"

namespace tessera {

ImageRgba8 render_aa_frame(const std::vector<CameraParams>& eyes, uint32_t samples, const EyeRenderer& render_eye) {
  if (eyes.empty() || eyes.size() > 2) throw Error("a frame has one or two eyes");
  if (samples == 0) throw Error("anti-aliasing needs at least one sample");
  const auto render_sample = [&](uint32_t k) {
    const std::array<float, 2> offset = jitter_offset(k);
    ImageRgba8 left = render_eye(jittered_camera(eyes[0], offset));
    if (eyes.size() == 1) return left;
    return side_by_side(left, render_eye(jittered_camera(eyes[1], offset)));
  };
  if (samples == 1) return render_sample(0);
  LinearMean mean;
  for (uint32_t k = 0; k < samples; ++k) mean.add(render_sample(k));
  return mean.mean();
}

}  // namespace tessera
