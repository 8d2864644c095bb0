#include "master/pose/fixed_source.h"

namespace tessera::master {

FixedSource::FixedSource(const tpk::Manifest& scene) : pose_(pose_from_manifest(scene.camera())) {}

std::optional<PoseSample> FixedSource::next() {
  PoseSample sample;
  sample.pose = pose_;
  sample.time = index_++ / 60.0;
  sample.acquired = std::chrono::steady_clock::now();
  return sample;
}

}  // namespace tessera::master
