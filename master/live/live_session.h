#pragma once
// A live session (tessera-master --serve): pages connect over WSS, the driving page's poses steer
// the RenderSession (through LivePoseSource), and every completed frame goes back to every page as
// a JPEG, refined while the pose holds (jittered samples accumulated here for raytrace and vct,
// path samples accumulated on the workers for pathtrace). It also keeps the pages' dashboard
// fed (status about 4 times a second, worker events), applies settings changes between frames,
// and books the latency the driving page measures into the run's statistics.
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "master/cluster/scene_file.h"
#include "master/live/client_messages.h"
#include "master/live/http_server.h"
#include "master/live/live_figures.h"
#include "master/live/live_pose_source.h"
#include "master/live/page_stream.h"
#include "master/live/stream_options.h"
#include "master/session/scene_clock.h"
#include "master/session/scene_picker.h"
#include "master/session/session_observer.h"

namespace tessera::master::live {

struct LiveOptions {
  ServerOptions server;
  int jpeg_quality = 85;
  unsigned jpeg_threads = 0;        // JPEG bands encoded at once (0: one per hardware thread; 1: one JPEG a frame)
  uint32_t max_samples = 16;        // raytrace, vct: jittered samples per held pose
  uint32_t max_path_samples = 256;  // pathtrace: accumulated samples per pixel per held pose
  StreamOptions stream;             // video streams: --codec, --stream-bitrate, --reference-frames
};

class LiveSession final : public SessionObserver, public ConnectionHandler {
 public:
  // Binds the server (Error when it cannot); `initial`: the settings the RenderSession starts with.
  LiveSession(LiveOptions options, const SceneFile& scene, const SessionOptions& initial, LivePoseSource& poses);
  ~LiveSession() override;
  void start();  // serves from now on
  void stop(const std::string& reason = "the master stopped");  // closes the pages (telling them why) and the encoder
  std::string url() const;  // https://HOST:PORT/?token=TOKEN
  uint16_t port() const { return server_->port(); }

  // SessionObserver (the session's thread)
  void frame_completed(const CompletedFrame& frame) override;
  void worker_changed(const WorkerChange& change) override;
  void tick() override;
  std::optional<SessionOptions> take_options() override;
  bool options_pending() const override;
  void update_frame_options(SessionOptions& options, const PoseSample& pose) override;
  void settings_rejected(const std::string& why) override;
  void finish_records(std::vector<FrameRecord>& records) override;

 private:
  using Clock = std::chrono::steady_clock;
  struct Connection {
    bool greeted = false;
    bool wants_drive = false;  // said so in hello (the first in line when the driver leaves)
    bool depth = false;        // reprojects: its frames carry the depth section
    uint64_t greeted_order = 0;
    std::string client, peer;
    std::shared_ptr<PageStream> stream;  // a video stream (none: JPEG)
  };
  struct EncodeJob {
    uint64_t frame_id = 0, pose_id = 0;
    uint32_t refinement = 0, path_samples = 0;
    bool accumulate = false;  // raytrace, vct: jittered samples averaged here
    bool transparent = false; // the alpha plane goes out beside the colour
    ImageRgba8 image;
    std::vector<uint16_t> depth;  // inverse depths (empty: none asked for)
    float depth_near = 0;
    nlohmann::json header;    // without samples and encode time
  };
  struct AuxCost {
    size_t depth_bytes = 0, alpha_bytes = 0;
    double ms = 0;            // compressing both
  };
  struct WorkerState {
    std::string name, device, state = "connecting";
    std::string scene_memory;  // "fast" | "compact" once ready (SceneStatus.scene_memory)
  };
  struct WorkerLoad {
    Clock::time_point at;
    std::vector<std::pair<uint32_t, double>> tiles_busy;  // per worker: tiles, busy ms
  };

  // ConnectionHandler (the server's thread)
  void opened(uint64_t connection, const std::string& peer) override;
  void text(uint64_t connection, const std::string& message) override;
  void closed(uint64_t connection, const std::string& why) override;
  void frame_done(uint64_t connection, uint64_t frame_id, bool sent) override;

  void encode_loop();
  void apply_change(const SettingsChange& change);  // mutex_ held
  void frame_options_changed();                     // mutex_ held: aux_ or sun_ changed (the held pose renders afresh)
  void update_depth();                               // mutex_ held: depth while a connected page wants it
  void hand_over_driving(const std::string& former_peer);  // mutex_ held: the driving page left
  void place(const Place& place);                    // mutex_ held
  // Things that move (live_session_motion.cpp), mutex_ held.
  void motion_message(uint64_t connection, const ClientMessage& message);  // clock, pick, move
  void clock_change(const ClockChange& change);
  void move(const Move& move);
  void pick(uint64_t connection, const Pick& pick);
  void clock_moved();  // the held view renders afresh at the clock's new time or state
  // The render thread, before each further frame of the held pose (LivePoseSource::set_motion_check):
  // whether an instance in its rendered eyes' view moved since its instant (motion_in_view.h).
  bool held_view_moved(const PoseSample& held);
  std::vector<EyeView> rendered_eye_views(const PoseSample& pose) const;  // mutex_ held
  nlohmann::json clock_json() const;
  nlohmann::json moved_json() const;
  void light(const Light& light);                    // mutex_ held
  void send_frame_to_pages(uint64_t frame_id, const std::shared_ptr<const std::string>& plain,
                           const std::shared_ptr<const std::string>& with_depth);  // mutex_ held
  void count_page_bytes(size_t bytes);               // any thread
  void send_text(uint64_t connection, std::string message);  // counted in page_mbit_s
  void broadcast_text(std::string message);
  void book_page_times(const Displayed& shown, LiveFrameStats& frame);  // mutex_ held
  void refinement_for(const SessionOptions& options);
  nlohmann::json session_message(uint64_t connection) const;  // mutex_ held
  nlohmann::json settings_json(const SessionOptions& options) const;
  void event(const std::string& text);
  void send_session_messages();                            // mutex_ held
  // Video streams (live_session_streams.cpp).
  void open_stream(uint64_t connection, Connection& c, const Hello& hello);  // mutex_ held: the page's codec
  void stream_frame_sent(uint64_t connection, uint64_t frame_id, std::shared_ptr<const std::string> message,
                         const EncodedFrameInfo& info);  // a stream's encoded frame to its page (the pool's thread)
  void offer_to_streams(const std::shared_ptr<const ShownFrame>& shown);  // mutex_ held
  bool jpeg_wanted() const;                                  // mutex_ held: a page (or none yet) gets JPEG
  nlohmann::json stream_status() const;                      // mutex_ held: the driver's stream
  nlohmann::json stream_session(const Connection& c) const;  // the session message's codec and stream

  LiveOptions options_;
  const SceneFile& scene_;
  LivePoseSource& poses_;
  std::unique_ptr<HttpServer> server_;
  Clock::time_point started_ = Clock::now();

  mutable std::mutex mutex_;  // everything below up to the encoder's fields
  std::map<uint64_t, Connection> connections_;
  uint64_t driver_ = 0;
  SessionOptions current_;
  std::optional<SessionOptions> pending_, before_pending_;
  // Apply from the next frame, no frame in flight cancelled (update_frame_options): depth while a
  // page wants it, the background, the AR shadow catcher and sun.
  wire::AuxOutputs aux_;
  std::optional<wire::SunOverride> sun_;
  // The scene clock and the instances the pages moved (by index): every frame request carries both.
  SceneClock clock_;
  std::map<uint32_t, Transform3x4> placed_;
  std::unique_ptr<ScenePicker> picker_;  // instanced scenes: the master's host copy, for pick
  // The instant the held pose's frames show: the clock's time and the placed instances when its last
  // first frame opened. Its refinements render it again (so the workers' path-traced accumulation
  // goes on) until something in view moved.
  struct SceneInstant {
    uint64_t pose_id = 0;
    double time = 0;
    std::map<uint32_t, Transform3x4> placed;
    std::vector<Aabb> boxes;  // every instance's world box then (filled when first asked)
  };
  std::optional<SceneInstant> held_instant_;
  std::map<uint64_t, double> pose_times_;  // the driver's recent pose ids -> its clock
  std::map<uint64_t, LiveFrameStats> frames_;
  std::map<uint64_t, Clock::time_point> queued_at_;  // frame messages handed to the server
  std::deque<std::pair<Clock::time_point, double>> recent_latency_;
  struct PageTimes {
    Clock::time_point at;
    double network, decode, draw;
  };
  std::deque<PageTimes> recent_page_;  // the driver's reports of its side, for the status
  std::deque<Clock::time_point> recent_frames_;
  uint64_t frames_sent_ = 0, last_fresh_pose_ = 0;
  uint32_t last_samples_ = 0;
  uint64_t newest_frame_id_ = 0;  // the last frame message sent, for pages that come later
  std::shared_ptr<const std::string> newest_frame_, newest_frame_depth_;  // without, with the depth section
  std::map<uint64_t, std::pair<size_t, size_t>> frame_sizes_;  // frame id -> bytes of its messages without, with depth
  uint64_t greetings_ = 0;
  std::deque<std::pair<Clock::time_point, AuxCost>> recent_aux_;

  std::mutex bytes_mutex_;
  std::deque<std::pair<Clock::time_point, size_t>> page_bytes_;  // written to the pages' sockets

  std::vector<WorkerState> workers_;  // session thread
  std::deque<WorkerLoad> recent_load_;
  Clock::time_point next_status_ = Clock::now();
  Clock::time_point next_memory_release_ = Clock::now() + kFreeMemoryReleaseInterval;

  std::shared_ptr<const ShownFrame> newest_shown_;  // for a video page that comes later
  std::unique_ptr<TaskPool> stream_pool_;            // the pages' video encodes

  std::mutex encode_mutex_;
  std::condition_variable encode_ready_;
  std::deque<EncodeJob> encode_queue_;
  std::shared_ptr<const ImageRgba8> base_;  // encoder thread: the held pose's first frame, not yet in the mean
  uint64_t base_pose_ = 0;
  bool encode_stop_ = false;
  std::thread encoder_;
};

}  // namespace tessera::master::live
