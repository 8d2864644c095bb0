#pragma once
// A generated orbit: the camera circles the centre of the scene's bounds on a horizontal ellipse
// inside them (radii a share of the half extents; a share above 1 leaves them), looking at the
// centre; it starts on the side of the default camera. TurntableSource stays outside.
#include "master/pose/pose_source.h"

namespace tessera::master {

class OrbitSource final : public PoseSource {
 public:
  OrbitSource(const tpk::Manifest& scene, unsigned frames_per_revolution, float scale);
  std::optional<PoseSample> next() override;
  std::string describe() const override;

 private:
  std::array<float, 3> centre_{}, radius_{};
  float start_angle_ = 0;
  unsigned period_;
  unsigned index_ = 0;
};

}  // namespace tessera::master
