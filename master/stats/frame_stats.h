#pragma once
// Per-frame statistics of a cluster run, written as CSV (one row a frame, per-worker columns)
// or JSON (a summary and the frames), chosen by the file's extension.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::master {

// Where a frame's time went, stage by stage (milliseconds). Per tile stages are means over the
// frame's tiles: worker queue (request received -> its batch starts), device render (the tile's
// share of its batch's launch), readback, encode, wire (request sent -> result received, less the
// time on the worker: both directions and the network thread), master decode and composite.
// Per frame: pose wait (pose acquired -> frame opened), request out (sending the frame's requests),
// output (handing the frame to the writer).
struct StageTimes {
  double pose_wait = 0, request_out = 0, queue = 0, device = 0, readback = 0, encode = 0, wire = 0, decode = 0,
         composite = 0, output = 0;
  static const std::vector<std::string>& names();  // "pose_wait", "request_out", ... in this order
  std::vector<double> values() const;
  void add(const StageTimes& other, double weight = 1.0);  // this += other * weight, stage by stage
};

struct WorkerFrameStats {
  uint32_t tiles = 0;
  double busy_ms = 0;      // the worker's render time for these tiles (wall)
  double cpu_ms = 0;       // its render thread's CPU time for them
  uint64_t wire_bytes = 0; // tile messages from it, length prefixes included
  uint32_t batches = 0;    // tiles rendered in one launch count once
  StageTimes stages;       // per tile means of its tiles (the per frame stages stay 0)
};

// A frame of a live session (--serve): the view it showed and where its time went, end to end.
struct LiveFrameStats {
  uint64_t pose_id = 0;
  uint32_t samples = 0;        // samples per pixel the page got with it (jittered or path samples)
  bool fresh = false;          // the first frame of its pose (not a refinement)
  double pose_wait_ms = 0;     // pose arrived -> frame opened
  double render_ms = 0;        // the slowest worker's render time for its tiles
  double wire_ms = 0;          // frame opened -> last tile in, less render and composite: network and queues
  double composite_ms = 0;     // decoding and placing tiles
  double accumulate_ms = 0;    // adding the jittered sample into the running mean
  double encode_ms = 0;        // JPEG
  double send_ms = 0;          // frame message queued -> written to the driving page's socket (-1: skipped, slow page)
  // The frame's depth and alpha sections (zlib; 0: none) and the time compressing both took.
  uint64_t depth_bytes = 0, alpha_bytes = 0;
  double aux_ms = 0;
  // The driving page's stream: "jpeg" or its video codec; a video frame's bytes (sections not
  // counted), whether it was a key frame, the rate it was encoded at and its resolution scale.
  std::string codec = "jpeg";
  uint64_t video_bytes = 0;
  bool key_frame = false;
  double bitrate_mbit = 0, scale = 1;
  std::optional<double> page_latency_ms;  // the page's pose sent -> frame displayed
  // The driving page's own report of the frame: send written -> page received (network, socket and
  // page queues; the `displayed` report's way back included), received -> decoded, decoded -> drawn.
  std::optional<double> page_network_ms, page_decode_ms, page_draw_ms;
};

// Medians of a live session's stages over the first frames of new poses (the latency chain).
struct LiveStageMedians {
  double pose_wait = 0, render = 0, wire = 0, composite = 0, encode = 0, send = 0, network = 0, decode = 0, draw = 0;
};

struct FrameRecord {
  size_t index = 0;
  uint64_t frame_id = 0;
  double pose_time = 0;
  bool complete = false;
  bool superseded = false;  // live poses: dropped because a newer frame was shown first (not a failure)
  double frame_ms = 0;     // request sent -> last tile composited
  double latency_ms = 0;   // pose acquired -> last tile composited
  double completed_s = 0;  // when it completed, seconds since the first frame opened
  uint32_t tiles = 0, tiles_received = 0, assignments = 0, reassigned = 0, duplicates = 0;
  uint32_t reissued = 0;     // dynamic: tile copies given at the frame's tail (the later copy back is discarded)
  uint64_t wire_bytes = 0;   // tile messages, all workers
  uint64_t pixel_bytes = 0;  // the same tiles uncompressed
  double samples_per_pixel = 0;  // pathtrace: mean accumulated samples per pixel and eye (0 in other modes)
  StageTimes stages;
  std::vector<WorkerFrameStats> workers;
  std::string note;
  std::optional<LiveFrameStats> live;
  // The settings the frame was rendered with (a live session changes them between frames).
  std::string mode;  // raytrace | pathtrace | vct
  uint32_t width = 0, height = 0, tile_size = 0;
  bool stereo = false;
};

struct RunSummary {
  std::vector<std::string> worker_names;
  std::vector<std::string> worker_devices;
  std::vector<std::string> worker_scene_memory;  // "fast" | "compact" a worker (SceneStatus.scene_memory)
  std::string mode, schedule, scene, poses;  // mode: raytrace | pathtrace | vct
  bool stereo = false;
  uint32_t width = 0, height = 0, tile_size = 0;
  size_t frames_complete = 0, frames_failed = 0, frames_superseded = 0;
  uint64_t tiles_reissued = 0;  // dynamic: tail copies over all frames
  double wall_seconds = 0;
  double mean_frame_ms = 0, median_frame_ms = 0, mean_latency_ms = 0, mean_wire_bytes = 0, frames_per_second = 0;
  double mean_frame_ms_after_first = 0;  // without the first (warm-up) frame
  double min_frame_ms_after_first = 0;   // the best frame: least disturbed by other load on the machine
  double mean_interval_ms = 0;  // between completions (1 / throughput; what pipelining improves)
  // Live sessions: pose sent -> frame displayed as the page measured it, first frames of each pose.
  size_t page_latency_count = 0;
  double page_latency_median_ms = 0, page_latency_p95_ms = 0;
  double fresh_frames_per_second = 0;  // first frames of new poses per second (refinements not counted)
  std::optional<LiveStageMedians> live_stages;  // live sessions with page reports
  double p95_frame_ms = 0;
  StageTimes median_stages;     // stage by stage, the median over the complete frames
};

RunSummary summarize(const std::vector<FrameRecord>& records, RunSummary base);
nlohmann::json to_json(const RunSummary& summary);
nlohmann::json to_json(const FrameRecord& record, const std::vector<std::string>& worker_names);

// .json: {"summary": ..., "frames": [...]}; anything else: CSV. Written atomically.
void write_stats(const std::filesystem::path& path, const RunSummary& summary, const std::vector<FrameRecord>& records);

}  // namespace tessera::master
