#pragma once
// One master's connection to this worker: the handshake, scene load or push, and frame
// requests queued as tile work for the render thread. The render thread takes the tiles queued
// for a frame as one batch (one launch for raytrace), the encoders turn them into messages off
// the render thread (a pathtrace batch's pairs each as soon as it is on the host), and they go back one by one (dynamic schedule) or as one batch per frame
// (static schedule). CancelFrame drops a frame's queued tiles at once; a frame's running render
// gives up between launches.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/base/task_pool.h"
#include "common/net/connection.h"
#include "common/net/handshake.h"
#include "common/net/log.h"
#include "common/net/tile_grid.h"
#include "worker/daemon/render_thread.h"
#include "worker/daemon/scene_store.h"
#include "worker/daemon/worker_config.h"

namespace tessera::worker {

// Counters over all connections, for logs and WorkerStats.
struct WorkerCounters {
  std::atomic<uint64_t> tiles_rendered{0}, frames{0}, busy_us{0}, connections{0}, rejected{0};
};

struct WorkerContext {
  const WorkerConfig& config;
  SceneStore& scenes;
  RenderThread& render;
  WorkerCounters& counters;
  TaskPool* encoders = nullptr;  // tile encoding off the render thread (none: encoded on it)
};

// Lines that peers can cause (connections, refusals, their errors), throttled across all
// connections so that no peer can flood the worker's log.
net::LogBudget& peer_caused_log();

class WorkerSession : public std::enable_shared_from_this<WorkerSession>, public RenderWork {
 public:
  // Asked once the master proved the secret: empty to admit it, else why it is turned away
  // (the worker is busy: the master may try again later).
  using Admit = std::function<std::string()>;
  WorkerSession(std::shared_ptr<net::Connection> connection, WorkerContext context);
  ~WorkerSession() override;
  // `on_closed` runs once, on the io thread, when the connection ends.
  void start(Admit admit, std::function<void(const std::string& reason)> on_closed);
  void close(const std::string& reason) { connection_->close(reason); }
  const std::string& peer() const { return connection_->peer(); }

 private:
  struct Frame;
  struct Batch;
  struct Unit;
  using Clock = std::chrono::steady_clock;
  struct Work {  // tiles of one request (or TileAssign), in order
    std::shared_ptr<Frame> frame;
    std::vector<uint32_t> tiles;
    Clock::time_point received;
  };

  void on_message(wire::Envelope& message);
  void handle_handshake(const wire::Envelope& message);
  void welcome(wire::Envelope welcome);
  void handle_load_scene(const wire::LoadScene& load);
  void handle_scene_chunk(const wire::SceneChunk& chunk);
  void handle_frame_request(const wire::FrameRequest& request);
  void handle_tile_assign(const wire::TileAssign& assign);
  void handle_cancel(const wire::CancelFrame& cancel);
  void refuse(const std::string& reason, bool temporary = false);
  void send_error(wire::ErrorMessage::Code code, const std::string& message, uint64_t frame_id);
  void queue_tiles(const std::shared_ptr<Frame>& frame, const google::protobuf::RepeatedField<uint32_t>& tiles);
  void ask_for_push(const wire::LoadScene& load);
  // push_if_gone: a scene of the directory that turns out to be gone (its file changed) is asked for
  // as a push instead of failing; push_lock: the pushed file's lock, released once it is adopted
  void load_scene_async(uint64_t hash, const std::string& name, const std::string& pushed_file,
                        std::optional<wire::LoadScene> push_if_gone, std::shared_ptr<const int> push_lock = nullptr);
  void abort_push();
  // Render thread.
  Step run_step() override;
  bool has_work() const override;
  bool take_batch(Batch& batch);  // with mutex_ held
  void render_batch(Batch& batch);
  void pose_scene_for(Frame& frame);  // render thread
  // Encoders (or the render thread): encodes a unit's tiles and hands them to the connection.
  void encode_and_send(const std::shared_ptr<Frame>& frame, Unit& unit, Clock::time_point received);
  void forget_pending();

  std::shared_ptr<net::Connection> connection_;
  WorkerContext context_;
  net::WorkerHandshake handshake_;
  Admit admit_;
  std::function<void(const std::string&)> on_closed_;

  // Io thread only.
  std::shared_ptr<LoadedScene> scene_;
  bool scene_loading_ = false;
  std::optional<wire::VctParams> prepare_vct_;  // of the last LoadScene
  unsigned errors_logged_ = 0;
  struct Push {
    uint64_t hash = 0, size = 0, received = 0;
    std::string name;
    std::filesystem::path temp;
    std::FILE* file = nullptr;
    std::shared_ptr<const int> lock;  // SceneStore::PartialPush: held until the scene is adopted
  } push_;
  std::map<uint64_t, std::shared_ptr<Frame>> frames_;

  // Shared with the render thread and the encoders.
  mutable std::mutex mutex_;
  std::deque<Work> pending_;
  uint64_t queued_tiles_ = 0;     // pending, rendering or encoding
  uint64_t units_encoding_ = 0;   // rendered, waiting for an encoder
};

}  // namespace tessera::worker
