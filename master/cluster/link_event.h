#pragma once
// What the network side of the master reports to the scheduling thread.
#include <chrono>
#include <string>

#include "wire.pb.h"

namespace tessera::master {

struct LinkEvent {
  enum class Kind {
    ready,    // handshake done and the scene loaded: the worker takes tiles
    failed,   // could not get ready (refused, unreachable, scene failed); retried later
    lost,     // was ready, now gone: its tiles must go to others
    message,  // tile results, errors, stats, heartbeats from a ready worker
    composited,  // the master's own: a tile of `worker` decoded into frame `frame_id` (or `reason` why not)
  };
  Kind kind = Kind::message;
  int worker = -1;
  std::string reason;            // failed / lost
  // failed: the connection broke during the handshake for a reason that may pass (the worker
  // was busy, gave the slot to a newer connection, or the handshake timed out), not a refusal
  // for good; Cluster tries again at once while the start-up time lasts.
  bool temporary = false;
  wire::WorkerInfo info;         // ready
  wire::SceneStatus scene;       // ready
  bool pushed = false;           // ready: the scene had to be pushed
  wire::Envelope message;        // message
  uint64_t wire_bytes = 0;       // message: bytes on the wire, length prefix included
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::now();
  uint64_t frame_id = 0;          // composited
  uint32_t tile_id = 0;           // composited
  double decode_ms = 0, composite_ms = 0;  // composited
};

}  // namespace tessera::master
