#pragma once
// The discovery beacon datagram (proto/discovery.proto) shared by tessera-worker --beacon and
// tessera-master --discover: "TSB1" + a serialized discovery::Beacon, at most 512 bytes.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "discovery.pb.h"

namespace tessera::net {

inline constexpr uint16_t kDiscoveryPort = 7199;
inline constexpr char kBeaconMagic[4] = {'T', 'S', 'B', '1'};
inline constexpr size_t kMaxBeaconBytes = 512;
inline constexpr size_t kMaxBeaconName = 128;

// Throws Error when the beacon would not decode on the other side (bad port, name or size).
std::vector<uint8_t> encode_beacon(const discovery::Beacon& beacon);
// nullopt for anything that is not a valid beacon; `why` (if given) says what was wrong.
std::optional<discovery::Beacon> decode_beacon(const uint8_t* data, size_t size, std::string* why = nullptr);

}  // namespace tessera::net
