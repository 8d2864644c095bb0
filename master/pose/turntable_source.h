#pragma once
// A turntable: the camera circles the scene outside its bounds, at the distance where the bounding
// sphere fills the vertical field of view (common/render/framing.h) times a scale (>= 1 keeps it
// outside), a little above the centre, looking at the centre. Starts in front (+z).
#include "master/pose/pose_source.h"

namespace tessera::master {

class TurntableSource final : public PoseSource {
 public:
  // vertical_fov_degrees 0: the scene camera's (or 60).
  TurntableSource(const tpk::Manifest& scene, unsigned frames_per_revolution, float scale, float vertical_fov_degrees);
  std::optional<PoseSample> next() override;
  std::string describe() const override;

 private:
  std::array<float, 3> centre_{};
  float radius_ = 0, height_ = 0;
  unsigned period_;
  unsigned index_ = 0;
};

}  // namespace tessera::master
