#pragma once
// The scene's default camera, again and again: a fixed view for benchmarks (the paper measures
// fixed views) and quick looks.
#include "master/pose/pose_source.h"

namespace tessera::master {

class FixedSource final : public PoseSource {
 public:
  explicit FixedSource(const tpk::Manifest& scene);
  std::optional<PoseSample> next() override;
  std::string describe() const override { return "the scene's camera"; }

 private:
  Pose pose_;
  unsigned index_ = 0;
};

}  // namespace tessera::master
