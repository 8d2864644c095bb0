#pragma once
// The master's frame loop: takes poses, opens frames (up to `pipeline` at once), lets the
// TileScheduler hand out tiles over the Cluster, composites what comes back, and sends whole
// frames to the writer and the statistics. It owns the fault handling: stalled workers are
// dropped, lost workers' tiles go to the others, a frame that cannot be completed is reported
// and skipped (never written), and with no worker left the run ends with an Error.
// render_session.cpp opens frames and keeps the loop; render_session_results.cpp takes what comes back.
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/base/progress.h"
#include "master/cluster/cluster.h"
#include "master/frame/frame_assembler.h"
#include "master/output/frame_writer.h"
#include "master/pose/pose_source.h"
#include "master/session/rendered_eyes.h"
#include "master/session/session_observer.h"
#include "master/session/session_options.h"
#include "master/stats/frame_stats.h"
#include "master/stats/record_window.h"

namespace tessera::master {

class RenderSession final : private ScheduleOutput {
 public:
  RenderSession(SessionOptions options, Cluster& cluster, const SceneFile& scene, PoseSource& poses);
  ~RenderSession() override;

  // Runs to the end of the poses (or `frames`). Throws Error when no worker can be used.
  RunSummary run();
  // Any thread (signal handlers too): open no new frame, finish the open ones.
  void request_stop() { stop_requested_ = true; }
  const std::vector<FrameRecord>& records() const { return records_.records(); }
  // A live front end that follows frames and changes settings (before run(); may be null).
  void set_observer(SessionObserver* observer) { observer_ = observer; }
  const SessionOptions& options() const { return options_; }

 private:
  using Clock = std::chrono::steady_clock;
  static double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  }
  struct OpenFrame {
    size_t index = 0;
    PoseSample pose;
    RenderedEyes eyes;           // as rendered (the guard band applied)
    wire::FrameRequest request;  // without tiles
    // Shared with the tile pool (Cluster::tile_pool), which decodes tiles straight into its image.
    std::shared_ptr<FrameAssembler> assembler;
    Clock::time_point opened;
    FrameRecord record;
    double pixel_samples = 0;  // pathtrace: samples per pixel x pixels over the tiles that arrived
    std::vector<Clock::time_point> sent;  // per scheduling unit: when it last went to a worker
    StageTimes tile_sums;                 // per tile stages, summed over the timed tiles
    uint32_t timed_tiles = 0, composited_tiles = 0;
    std::vector<double> batches;          // per worker: sum of 1 / batch size over its tiles
  };
  struct WorkerView {
    std::string name;  // address, then the worker's own name
    std::string device;
    std::string scene_memory = "fast";  // the worker's scene-memory profile (SceneStatus.scene_memory)
    bool ready = false;
    bool dropping = false;
    std::string last_failure;
    uint64_t tiles_rendered = 0;
    Clock::time_point last_progress;
    wire::TileEncoding encoding = wire::ZSTD_RGBA8;  // what its link gets (--compression auto: by measurement)
    bool loopback = false;
    bool eye_views = false, aa_sample = false;  // the live view features it lists (WorkerInfo.features)
    bool aux_outputs = false, sun_override = false;  // the AR features it lists
    bool scene_motion = false;                        // places instances at the request's time (FrameRequest.scene_time_s)
    std::set<std::string> told_missing;              // features it was warned about once (live frames it is not given)
    double link_bytes_per_ms = 0;  // measured on its tiles (moving average)
    double zstd_ratio = 0;         // wire bytes / pixel bytes of its zstd tiles (moving average)
    double codec_ms_per_mb = 0;    // encode + decode per MB of pixels (moving average)
    double rtt_tiles = 0;          // tiles it could render while one travels (for --inflight auto)
  };

  void request_tiles(int worker, uint64_t frame, const std::vector<uint32_t>& tiles) override;
  void assign_tiles(int worker, uint64_t frame, const std::vector<uint32_t>& tiles) override;
  void cancel_frame(int worker, uint64_t frame) override;

  void wait_for_workers();
  void apply_options(SessionOptions options);  // normalizes and checks; Error leaves the old ones
  void apply_pending_options();
  void supersede_refinements();
  void supersede_for_settings();
  void supersede(const std::function<bool(const OpenFrame&)>& stale);  // closes the open frames it picks
  bool open_next_frame();
  std::set<int> lacking_features(const wire::FrameRequest& request);  // workers that cannot render it
  void set_scene_motion(wire::FrameRequest& request, const PoseSample& pose);
  bool guard_band_possible();  // every ready worker renders explicit eye views (one warning when not)
  void handle(LinkEvent& event);
  void handle_tile(int worker, wire::TileResult& tile, uint64_t wire_bytes, Clock::time_point received);
  void handle_composited(const LinkEvent& event);
  void choose_encoding(int worker);
  void tune_inflight();
  void finish_frame(uint64_t frame_id);
  uint32_t units_received(const FrameAssembler& assembler) const;  // tiles, or whole pathtrace stereo pairs
  void abandon_frame(uint64_t frame_id, const std::string& why, bool superseded = false);
  void check_deadlines();
  void drop(int worker, const std::string& reason);
  void refuse_frame(int worker, uint64_t frame_id, const std::string& why);  // Error BAD_REQUEST
  void update_status();
  std::string failures() const;
  RunSummary summary() const;
  void write_stats_file() const;

  SessionOptions options_;
  std::optional<SessionOptions> previous_options_;  // before the last live change, until a frame completes with it
  Cluster& cluster_;
  const SceneFile& scene_;
  PoseSource& poses_;
  TileScheduler scheduler_;
  bool tile_pairs_ = false;  // pathtrace stereo: a scheduled tile is both eyes' rectangles
  std::unique_ptr<FrameWriter> writer_;
  std::vector<WorkerView> workers_;
  std::map<uint64_t, OpenFrame> open_;
  RecordWindow records_;  // a live session's newest frames only
  size_t frames_opened_ = 0;
  bool poses_ended_ = false;
  std::atomic<bool> stop_requested_{false};
  std::optional<Clock::time_point> no_worker_since_;
  Clock::time_point started_;
  uint64_t late_tiles_ = 0;
  std::unique_ptr<ProgressBar> status_;
  SessionObserver* observer_ = nullptr;
  static constexpr std::chrono::seconds kLiveStartGrace{6};  // past the 5 s handshake limit
  Clock::time_point first_ready_{};
  bool told_aux_unsupported_ = false, told_no_guard_band_ = false, told_no_motion_ = false;
  uint64_t superseded_ = 0;  // frames cancelled for a newer pose (refinements) or new settings
  double round_trip_ms_ = 0;  // a tile's trip besides rendering, all workers (moving average)
  std::optional<double> first_pose_time_;  // offline scene clock: the poses' time it counts from
};

}  // namespace tessera::master
