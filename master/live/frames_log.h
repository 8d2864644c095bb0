#pragma once
// tessera-live-client --frames-log: one CSV row per frame the page received, written as it comes
// (flushed, so a client that is killed keeps what it saw), for deploy/soak's checks: frames lost,
// duplicated or shown out of order within a connection, and latency percentiles over time.
//   unix_ms,connection,frame,pose_id,samples,latency_ms
// connection: 1 for the first WebSocket, +1 for each reconnect (frame numbers rise within one);
// latency_ms: pose sent -> frame shown, on the first frame of a pose only (empty on refinements).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>

namespace tessera::master::live {

class FramesLog {
 public:
  explicit FramesLog(const std::filesystem::path& path);  // throws Error when it cannot be written
  ~FramesLog();
  FramesLog(const FramesLog&) = delete;
  FramesLog& operator=(const FramesLog&) = delete;

  void add(unsigned connection, uint64_t frame, uint64_t pose_id, uint32_t samples, std::optional<double> latency_ms);

 private:
  std::FILE* file_ = nullptr;
};

}  // namespace tessera::master::live
