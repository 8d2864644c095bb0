#include "common/net/discovery.h"

#include <cstring>

#include "common/base/error.h"
#include "common/net/peer_text.h"

namespace tessera::net {
namespace {

std::string problem(const discovery::Beacon& b) {
  if (b.port() == 0 || b.port() > 65535) return "port " + std::to_string(b.port()) + " out of range";
  if (b.name().empty() || b.name().size() > kMaxBeaconName) return "name empty or longer than 128 bytes";
  if (!is_printable_utf8(b.name())) return "name is not printable UTF-8";
  if (b.device().size() > kMaxBeaconName || !is_printable_utf8(b.device())) return "bad device text";
  return {};
}

}  // namespace

std::vector<uint8_t> encode_beacon(const discovery::Beacon& beacon) {
  if (const std::string why = problem(beacon); !why.empty()) throw Error("bad discovery beacon: " + why);
  std::vector<uint8_t> out(sizeof kBeaconMagic + beacon.ByteSizeLong());
  std::memcpy(out.data(), kBeaconMagic, sizeof kBeaconMagic);
  beacon.SerializeToArray(out.data() + sizeof kBeaconMagic, int(out.size() - sizeof kBeaconMagic));
  if (out.size() > kMaxBeaconBytes) throw Error("discovery beacon larger than 512 bytes");
  return out;
}

std::optional<discovery::Beacon> decode_beacon(const uint8_t* data, size_t size, std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<discovery::Beacon> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (size > kMaxBeaconBytes) return fail("datagram larger than 512 bytes");
  if (size < sizeof kBeaconMagic || std::memcmp(data, kBeaconMagic, sizeof kBeaconMagic) != 0)
    return fail("not a Tessera beacon (magic)");
  discovery::Beacon beacon;
  if (!beacon.ParseFromArray(data + sizeof kBeaconMagic, int(size - sizeof kBeaconMagic))) return fail("unparseable beacon");
  if (const std::string reason = problem(beacon); !reason.empty()) return fail(reason);
  return beacon;
}

}  // namespace tessera::net
