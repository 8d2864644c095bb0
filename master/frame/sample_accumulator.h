#pragma once
// Refines raytrace and vct frames while the viewer holds still: the frames of one view rendered
// with FrameRequest.aa_sample 0, 1, 2, ... (sub-pixel jittered rays, common/render/jitter.h) are
// added here as they complete, and resolve() is their mean in linear light (common/image/
// linear_mean.h) — after N frames the image tessera-render --aa N writes. Any change of what is
// rendered (a new pose, size, mode or setting) must start afresh with reset().
//
//   accumulator.reset();                                   // new pose
//   request.set_aa_sample(accumulator.next_aa_sample());   // 0, then 1, 2, ... while it holds
//   accumulator.add(composited_frame);
//   send(accumulator.resolve(), accumulator.samples());
#include <cstddef>
#include <cstdint>

#include "common/image/linear_mean.h"

namespace tessera::master {

class SampleAccumulator {
 public:
  // A decoded RGBA8 sRGB frame (stereo: both eyes side by side). Throws Error (nothing changes)
  // when it is empty or differs in size from the frames added since the last reset.
  void add(const ImageRgba8& frame);
  // Frames added since the last reset.
  uint32_t samples() const noexcept { return mean_.count(); }
  // The FrameRequest.aa_sample of the next frame of this view: samples are rendered in order.
  uint32_t next_aa_sample() const noexcept { return mean_.count(); }
  // RGBA8 sRGB of the mean; throws Error when no frame was added.
  ImageRgba8 resolve() const;
  // Starts afresh and gives the sums back: a head that moves again needs none until it holds.
  void reset();
  size_t bytes_held() const noexcept { return mean_.bytes_held(); }

 private:
  LinearMean mean_;
};

}  // namespace tessera::master
