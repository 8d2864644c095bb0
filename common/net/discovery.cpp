#include "common/net/discovery.h"

#include <cstring>

#include "common/base/error.h"

namespace tessera::net {
namespace {

// Printable UTF-8: no control characters (C0, DEL), well-formed multi-byte sequences.
bool printable_utf8(const std::string& text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = uint8_t(text[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t more = 0;
    if ((c & 0xe0) == 0xc0 && c >= 0xc2) more = 1;
    else if ((c & 0xf0) == 0xe0) more = 2;
    else if ((c & 0xf8) == 0xf0 && c <= 0xf4) more = 3;
    else return false;
    if (i + more >= text.size()) return false;
    for (size_t k = 1; k <= more; ++k)
      if ((uint8_t(text[i + k]) & 0xc0) != 0x80) return false;
    i += more + 1;
  }
  return true;
}

std::string problem(const discovery::Beacon& b) {
  if (b.port() == 0 || b.port() > 65535) return "port " + std::to_string(b.port()) + " out of range";
  if (b.name().empty() || b.name().size() > kMaxBeaconName) return "name empty or longer than 128 bytes";
  if (!printable_utf8(b.name())) return "name is not printable UTF-8";
  if (b.device().size() > kMaxBeaconName || !printable_utf8(b.device())) return "bad device text";
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
