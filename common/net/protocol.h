#pragma once
// Constants of the cluster protocol (proto/wire.proto) that both ends must agree on.
#include <cstdint>
#include <string>

#include "wire.pb.h"

namespace tessera::net {

inline constexpr uint32_t kProtocolVersion = 2;  // 2: the master proves first, sealed frames
inline constexpr size_t kNonceBytes = 32;
// Render modes this build knows; a FrameRequest with another mode is refused by name.
inline constexpr const char* kRaytraceMode = "raytrace";
inline constexpr const char* kPathtraceMode = "pathtrace";
inline constexpr const char* kVctMode = "vct";
// FrameRequest fields a worker lists in WorkerInfo.features when it honours them.
inline constexpr const char* kEyeViewsFeature = "eye_views";
inline constexpr const char* kAaSampleFeature = "aa_sample";
inline constexpr const char* kAuxOutputsFeature = "aux_outputs";  // FrameRequest.aux, TileResult.depth
inline constexpr const char* kSunOverrideFeature = "sun_override";  // FrameRequest.sun
inline constexpr const char* kSceneMotionFeature = "scene_motion";  // FrameRequest.scene_time_s, instance_transforms

// "frame_request", "tile_batch", ... for logs and errors; "empty" when no body is set.
std::string body_name(const wire::Envelope& message);
std::string body_name(wire::Envelope::BodyCase body);

// Thrown by message handlers when the peer broke the protocol: the connection closes with this
// reason (sent to the peer as a fatal Error and logged).
class ProtocolError : public std::runtime_error {
 public:
  explicit ProtocolError(const std::string& reason) : std::runtime_error(reason) {}
};

}  // namespace tessera::net
