#include "master/pose/pose_source.h"

#include "common/base/error.h"
#include "common/base/usage_error.h"
#include "master/pose/fixed_source.h"
#include "master/pose/orbit_source.h"
#include "master/pose/trajectory_source.h"
#include "master/pose/turntable_source.h"
#include "master/pose/udp_pose_source.h"

namespace tessera::master {

std::unique_ptr<PoseSource> make_pose_source(const std::string& spec, const tpk::Manifest& scene, const PoseSourceOptions& options) {
  if (spec == "camera") return std::make_unique<FixedSource>(scene);
  if (spec == "orbit") return std::make_unique<OrbitSource>(scene, options.orbit_frames, options.orbit_scale);
  if (spec == "turntable")
    return std::make_unique<TurntableSource>(scene, options.orbit_frames, options.orbit_scale, options.vertical_fov_degrees);
  if (spec.rfind("udp://", 0) == 0)
    return std::make_unique<UdpPoseSource>(net::parse_host_port(spec.substr(6), "--poses", true), options.udp_timeout_seconds);
  if (spec.empty()) throw UsageError("no pose source: --poses FILE | orbit | turntable | camera | udp://HOST:PORT");
  return std::make_unique<TrajectorySource>(spec);
}

}  // namespace tessera::master
