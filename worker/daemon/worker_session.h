#pragma once
// One master's connection to this worker: the handshake, scene load or push, and frame
// requests turned into tile jobs for the render thread, whose results go back one by one
// (dynamic schedule) or as one batch per frame (static schedule).
#include <array>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

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
};

// Lines that peers can cause (connections, refusals, their errors), throttled across all
// connections so that no peer can flood the worker's log.
net::LogBudget& peer_caused_log();

class WorkerSession : public std::enable_shared_from_this<WorkerSession> {
 public:
  // Asked once the master proved the secret: empty to admit it, else why it is turned away
  // (the worker is busy: the master may try again later).
  using Admit = std::function<std::string()>;
  WorkerSession(std::shared_ptr<net::Connection> connection, WorkerContext context);
  ~WorkerSession();
  // `on_closed` runs once, on the io thread, when the connection ends.
  void start(Admit admit, std::function<void(const std::string& reason)> on_closed);
  void close(const std::string& reason) { connection_->close(reason); }
  const std::string& peer() const { return connection_->peer(); }

 private:
  struct Frame;

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
  void load_scene_async(uint64_t hash, const std::string& name, const std::string& pushed_file);
  void abort_push();
  // Render thread.
  void render_tile(const std::shared_ptr<Frame>& frame, uint32_t tile);
  void wait_for_send_room() const;

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
  } push_;
  std::map<uint64_t, std::shared_ptr<Frame>> frames_;

  // Shared with the render thread.
  mutable std::mutex mutex_;
  uint64_t queued_tiles_ = 0;
};

}  // namespace tessera::worker
