// UDP pose datagrams: one record each, at most kMaxPoseDatagramBytes; a longer one is refused
// whole (reading it cut short could turn an invalid record into a valid, different pose).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/base/error.h"
#include "master/pose/pose_parse.h"
#include "master/pose/udp_pose_source.h"

namespace tessera::master {
namespace {

// A record that is invalid whole (gaze 9,9 lies outside [0, 1]) but valid cut after 2047 bytes.
std::string oversized_record() {
  std::string record = "0,0,0,5,1,0,0,0";
  record += std::string(2053 - record.size() - 4, ' ');
  return record + ",9,9";
}

TEST(PoseDatagram, LongerThanTheLimitIsRefusedWhole) {
  const std::string record = oversized_record();
  ASSERT_EQ(record.size(), 2053u);
  EXPECT_THROW(parse_pose_datagram(std::string_view(record).substr(0, kMaxPoseDatagramBytes), record.size()), Error);
  EXPECT_THROW(parse_pose_datagram(record, record.size()), Error);
  const std::string good = "1.5,0,1,2,1,0,0,0";
  const auto ok = parse_pose_datagram(good, good.size());
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->time, 1.5);
}

void send_datagram(uint16_t port, const std::string& payload) {
  const int s = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::sendto(s, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to), ssize_t(payload.size()));
  ::close(s);
}

TEST(PoseDatagram, UdpSourceIgnoresAnOversizedDatagram) {
  UdpPoseSource source({"127.0.0.1", 0}, 0.5);
  send_datagram(source.port(), oversized_record());
  EXPECT_THROW(source.next(), Error);  // nothing accepted: "no pose arrived"
  send_datagram(source.port(), "2,0,1,2,1,0,0,0");
  const auto pose = source.next();
  ASSERT_TRUE(pose.has_value());
  EXPECT_EQ(pose->time, 2.0);
}

}  // namespace
}  // namespace tessera::master
