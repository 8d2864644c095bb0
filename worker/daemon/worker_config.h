#pragma once
// Settings of a worker daemon that its sessions need (from the command line).
#include <chrono>
#include <cstdint>
#include <string>

namespace tessera::worker {

struct WorkerConfig {
  std::string name;                 // shown to masters and in logs
  std::string secret;               // shared secret (never logged)
  std::string device = "auto";      // --device
  std::string device_name;          // what --device picked, for WorkerInfo
  uint64_t device_memory_bytes = 0; // its global memory (0: host backend)
  unsigned host_threads = 0;        // --threads (host backend; 0 = all cores)
  uint64_t gpu_memory_limit = 0;    // --gpu-mem-limit, 0 = none
  uint64_t max_scene_bytes = uint64_t(4) << 30;  // largest scene accepted by push
  unsigned max_connections = 32;          // authenticated masters served at once
  // Connections still in the handshake have their own, smaller budget, so that sockets that
  // never authenticate cannot take the masters' places; the newest connection always gets a
  // slot, at the cost of the oldest handshake of its address (or of the busiest address).
  unsigned max_handshakes = 16;
  unsigned max_handshakes_per_address = 4;
  // Output a connection may have waiting before its render work pauses (and its reading stops).
  uint64_t send_backlog_bytes = uint64_t(64) << 20;
  unsigned slowdown_ms = 0;         // --slowdown-ms: sleep after every tile (emulates a slower device)
  unsigned pathtrace_cpu_threads = 0;  // --cpu-threads: pathtrace helper threads beside an OpenCL device
  std::chrono::milliseconds handshake_timeout{3000};  // a master needs two round trips
  std::chrono::milliseconds heartbeat_interval{500};
  std::chrono::milliseconds heartbeat_timeout{30000};  // a master silent this long is gone
};

}  // namespace tessera::worker
