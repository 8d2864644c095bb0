#pragma once
// Hooks through which a live front end (master/live/) follows and steers a RenderSession without
// the session knowing about it: every completed frame, worker changes, a periodic tick, settings
// to apply between frames, and a last look at the records before the statistics are written.
// Every hook runs on the session's thread and must return quickly (copy what it keeps).
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/image/image.h"
#include "common/net/tile_grid.h"
#include "master/pose/pose_sample.h"
#include "master/session/rendered_eyes.h"
#include "master/session/session_options.h"
#include "master/stats/frame_stats.h"

namespace tessera::master {

struct CompletedFrame {
  const PoseSample& pose;
  const ImageRgba8& image;
  const net::TileGrid& grid;
  const std::vector<int>& owners;  // worker index per tile
  const FrameRecord& record;
  const SessionOptions& options;   // the settings it was rendered with
  const wire::FrameRequest& request;  // as the workers got it (without tiles)
  std::chrono::steady_clock::time_point opened, completed;
  double composite_ms = 0;         // decoding and placing its tiles, summed over them
  const RenderedEyes& eyes;        // each eye exactly as rendered (the guard band included)
  const std::vector<uint16_t>& depth;  // options.aux.depth: eyes*width x height inverse depths (else empty)
};

struct WorkerChange {
  enum class Kind { ready, rejoined, lost, failed };
  Kind kind = Kind::ready;
  int worker = -1;
  std::string name, device, reason;
  std::string scene_memory;  // ready, rejoined: "fast" | "compact" (SceneStatus.scene_memory)
};

class SessionObserver {
 public:
  virtual ~SessionObserver() = default;
  virtual void frame_completed(const CompletedFrame& frame) {}
  virtual void worker_changed(const WorkerChange& change) {}
  virtual void tick() {}  // about every 50 ms
  // New settings, taken when no frame is open; the session validates them (Error: kept as they were).
  virtual std::optional<SessionOptions> take_options() { return std::nullopt; }
  virtual bool options_pending() const { return false; }
  // Options that take effect with the next frame opened, without waiting for the frames in flight
  // (depth and alpha outputs, the AR shadow catcher and sun, the scene's instant): written into
  // `options` (aux, sun, scene_time, instance_transforms) for the frame of `pose`.
  virtual void update_frame_options(SessionOptions& options, const PoseSample& pose) {}
  virtual void settings_rejected(const std::string& why) {}
  virtual void finish_records(std::vector<FrameRecord>& records) {}  // before statistics are written
};

}  // namespace tessera::master
