#pragma once
// The parts of a WorkerSession that its files share (worker_session.cpp: the connection and frame
// requests; worker_session_scene.cpp: scene load and push; worker_session_render.cpp: the render
// thread and the encoders): a requested frame as the render thread renders it, a batch of its
// tiles, and what one encoder task turns into one message.
#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "worker/daemon/frame_motion.h"
#include "worker/daemon/frame_setup.h"
#include "worker/daemon/mode_renderers.h"
#include "worker/daemon/worker_session.h"

namespace tessera::worker {

inline constexpr int kDefaultZstdLevel = 1;


struct WorkerSession::Frame {
  enum class Mode { raytrace, pathtrace, vct };
  uint64_t id = 0;
  std::shared_ptr<LoadedScene> scene;
  net::TileGrid grid;
  std::array<CameraParams, 2> cameras{};
  RenderSettings settings{};
  Mode mode = Mode::raytrace;
  // pathtrace: a requested tile id names both eyes' rectangles (ids [0, tiles_per_eye)).
  bool tile_pairs = false;
  PathTraceSettings pt;
  PtView pt_view;
  // vct
  VctOptions vct_options;
  VctFrameSettings vct_frame;
  std::optional<std::array<float, 3>> move_light;
  uint32_t move_light_index = 0;
  // Depth and coverage beside the colour (FrameRequest.aux), from the aux pass's cameras (no jitter).
  AuxRequest aux;
  AuxSettings aux_settings{};
  std::optional<SunOverride> sun;  // FrameRequest.sun
  FrameMotion motion;              // FrameRequest.scene_time_s, instance_transforms
  std::array<CameraParams, 2> aux_cameras{};
  wire::ReplyMode reply = wire::BATCH;
  int zstd_level = kDefaultZstdLevel;
  std::atomic<bool> canceled{false};
  // Guarded by the session's mutex.
  uint32_t queued = 0;
  wire::Envelope batch;
  size_t batch_bytes = 0;
  std::vector<std::chrono::steady_clock::time_point> batch_received;  // per tile of `batch`: its request's arrival
};

// A batch: tiles of one frame the render thread renders in one go.
struct WorkerSession::Batch {
  std::shared_ptr<Frame> frame;
  std::vector<std::pair<uint32_t, Clock::time_point>> tiles;  // tile (or pair) id, when its request arrived
};

// What one encoder task turns into one message: a tile, or both eyes of a pathtrace pair.
struct WorkerSession::Unit {
  struct Output {
    uint32_t tile_id = 0;
    net::TileSpec spec;
    uint64_t offset = 0;  // first pixel in the batch's pixels
  };
  std::vector<Output> outputs;
  std::shared_ptr<HostPixels> pixels;
  std::shared_ptr<HostPixels> aux;  // the aux pass's words beside `pixels` (FrameRequest.aux), from the same pool
  wire::TileResult timing;  // render/device/readback/queue fields and batch_tiles, copied into each result
  float samples_per_pixel = 0;
};

}  // namespace tessera::worker
