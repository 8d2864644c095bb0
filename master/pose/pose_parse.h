#pragma once
// Pose records as trajectory files and UDP datagrams carry them:
//   CSV:  t,px,py,pz,qw,qx,qy,qz[,gx,gy]
//   JSON: {"t": 0.1, "position": [px,py,pz], "orientation": [qw,qx,qy,qz], "gaze": [gx,gy]}
// The quaternion must be unit length within 1 % (as tessera-render --pose demands).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "master/pose/pose_sample.h"

namespace tessera::master {

// Throws Error naming `where` on a malformed record. Blank lines, '#' comments and a CSV header
// line (first field not a number) give nullopt.
std::optional<PoseSample> parse_pose_record(const std::string& line, const std::string& where);

// One UDP datagram holds one record. `datagram_size` is the datagram's full length as the socket
// reports it (recv with MSG_TRUNC), `received` the bytes that fit the buffer: a datagram longer
// than kMaxPoseDatagramBytes is refused whole, never read cut short.
inline constexpr size_t kMaxPoseDatagramBytes = 2048;
std::optional<PoseSample> parse_pose_datagram(std::string_view received, size_t datagram_size);

}  // namespace tessera::master
