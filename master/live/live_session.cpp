#include "master/live/live_session.h"

#include <algorithm>
#include <cmath>

#include "common/base/error.h"
#include "common/net/log.h"
#include "master/frame/sample_accumulator.h"
#include "master/live/frame_message.h"
#include "master/live/jpeg_bands.h"
#include "master/session/mode_options.h"

namespace tessera::master::live {
namespace {

using nlohmann::json;

constexpr auto kStatusInterval = std::chrono::milliseconds(250);
constexpr auto kRateWindow = std::chrono::seconds(2);     // fps, tiles/s, busy %
constexpr auto kLatencyWindow = std::chrono::seconds(60); // the status's latency median and p95
constexpr size_t kPoseMemory = 4096;                      // pose ids kept for `displayed`

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(double(v.size()) * q))];
}

json vec3(const tpk::Vec3& v) { return {v.x(), v.y(), v.z()}; }

bool accumulates_here(const std::string& mode) { return mode == "raytrace" || mode == "vct"; }

}  // namespace

LiveSession::LiveSession(LiveOptions options, const SceneFile& scene, const SessionOptions& initial, LivePoseSource& poses)
    : options_(std::move(options)), scene_(scene), poses_(poses), current_(initial) {
  JpegEncoder check(options_.jpeg_quality);  // refuses a bad quality before anything starts
  if (options_.max_samples < 1 || options_.max_samples > 4096) throw Error("--max-samples must be in 1..4096");
  current_.stereo = current_.stereo || current_.ipd > 0;
  server_ = std::make_unique<HttpServer>(options_.server, *this);
  refinement_for(current_);
}

LiveSession::~LiveSession() { stop(); }

void LiveSession::start() {
  encoder_ = std::thread([this] { encode_loop(); });
  server_->start();
}

void LiveSession::stop(const std::string& reason) {
  {
    std::lock_guard lock(encode_mutex_);
    encode_stop_ = true;
  }
  encode_ready_.notify_all();
  if (encoder_.joinable()) encoder_.join();
  server_->stop(reason);
}

std::string LiveSession::url() const {
  std::string host = options_.server.host;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return "https://" + host + ":" + std::to_string(server_->port()) + "/?token=" + options_.server.token;
}

void LiveSession::refinement_for(const SessionOptions& o) {
  if (accumulates_here(o.mode)) {
    poses_.set_refinement(options_.max_samples, true);
  } else {
    const uint32_t spp = std::max(1u, o.pathtrace.spp());
    poses_.set_refinement(std::max(1u, options_.max_path_samples / spp), false);
  }
}

// ---- pages (the server's thread) ----

void LiveSession::opened(uint64_t connection, const std::string& peer) {
  std::lock_guard lock(mutex_);
  connections_[connection].peer = peer;
  net::log_info("live: page connected from " + peer);
}

void LiveSession::closed(uint64_t connection, const std::string& why) {
  std::lock_guard lock(mutex_);
  const auto it = connections_.find(connection);
  if (it == connections_.end()) return;
  net::log_info("live: page " + it->second.peer + " left (" + why + ")");
  if (driver_ == connection) {
    driver_ = 0;
    server_->broadcast_text(json{{"type", "event"}, {"t", ms_between(started_, Clock::now())}, {"text", "the driving page left"}}.dump());
  }
  connections_.erase(it);
}

void LiveSession::text(uint64_t connection, const std::string& message) {
  const ClientMessage parsed = parse_client_message(message);  // ProtocolError closes the connection
  std::lock_guard lock(mutex_);
  Connection& c = connections_[connection];
  if (!c.greeted && !std::holds_alternative<Hello>(parsed)) throw ProtocolError(1008, "the first message must be hello");
  if (const auto* hello = std::get_if<Hello>(&parsed)) {
    if (c.greeted) throw ProtocolError(1008, "hello twice");
    c.greeted = true;
    c.client = hello->client;
    if (hello->drive && driver_ == 0) driver_ = connection;
    server_->send_text(connection, session_message(driver_ == connection).dump());
    // The view as it is now, not an empty one until the pose moves.
    if (newest_frame_) server_->send_frame(connection, newest_frame_id_, newest_frame_);
    return;
  }
  if (std::holds_alternative<TakeControl>(parsed)) {
    const uint64_t former = driver_;
    driver_ = connection;
    if (former && former != connection) server_->send_text(former, session_message(false).dump());
    server_->send_text(connection, session_message(true).dump());
    server_->broadcast_text(json{{"type", "event"}, {"t", ms_between(started_, Clock::now())},
                                 {"text", "page " + c.peer + " (" + c.client + ") took control"}}.dump());
    return;
  }
  if (const auto* pose = std::get_if<PoseUpdate>(&parsed)) {
    if (connection != driver_) return;  // watchers' poses do not steer
    pose_times_[pose->pose.id] = pose->pose.client_time_ms;
    while (pose_times_.size() > kPoseMemory) pose_times_.erase(pose_times_.begin());
    const size_t eyes = pose->pose.views.size();
    const bool stereo = pending_ ? pending_->stereo : current_.stereo;
    if (eyes && (eyes == 2) != stereo) {  // an XR page: its eye count decides mono or stereo
      SettingsChange change;
      change.stereo = eyes == 2;
      apply_change(change);
    }
    poses_.submit(pose->pose);
    return;
  }
  if (const auto* shown = std::get_if<Displayed>(&parsed)) {
    if (connection != driver_) return;  // only the driver's clock is the poses' clock
    const auto t = pose_times_.find(shown->pose_id);
    const auto f = frames_.find(shown->frame);
    if (t == pose_times_.end() || f == frames_.end() || f->second.pose_id != shown->pose_id) return;
    book_page_times(*shown, f->second);
    if (!f->second.fresh || f->second.page_latency_ms) return;
    const double latency = shown->t - t->second;
    if (!(latency >= 0 && latency < 600000)) return;  // another clock: not a measurement
    f->second.page_latency_ms = latency;
    recent_latency_.emplace_back(Clock::now(), latency);
    return;
  }
  if (const auto* change = std::get_if<SettingsChange>(&parsed)) {
    if (connection != driver_) throw ProtocolError(1008, "settings come from the driving page only");
    apply_change(*change);
    return;
  }
  if (const auto* refused = std::get_if<RefusedSettings>(&parsed)) {
    if (connection != driver_) throw ProtocolError(1008, "settings come from the driving page only");
    event("settings refused: " + refused->reason);
    server_->send_text(connection, session_message(true).dump());  // what is still in force
    return;
  }
}

void LiveSession::book_page_times(const Displayed& shown, LiveFrameStats& frame) {
  if (!shown.received || !shown.decoded || frame.page_decode_ms) return;
  const double received = *shown.received, decoded = *shown.decoded;
  if (!(received <= decoded && decoded <= shown.t && shown.t - received < 600000)) return;  // not one clock's times
  const auto queued = queued_at_.find(shown.frame);
  if (queued == queued_at_.end()) return;
  // The master's clock from the frame message queued to this report, less the page's time with
  // the frame and the master's own send: the frame's way to the page and the report's way back.
  const double round_trip = ms_between(queued->second, Clock::now());
  const double network = round_trip - std::max(0.0, frame.send_ms) - (shown.t - received);
  frame.page_network_ms = std::max(0.0, network);
  frame.page_decode_ms = decoded - received;
  frame.page_draw_ms = shown.t - decoded;
  recent_page_.push_back({Clock::now(), *frame.page_network_ms, *frame.page_decode_ms, *frame.page_draw_ms});
}

void LiveSession::apply_change(const SettingsChange& change) {
  SessionOptions o = pending_ ? *pending_ : current_;
  if (change.mode) select_mode(o, *change.mode);  // its parameters came from the command line (mode_options)
  if (change.spp) o.pathtrace.set_spp(*change.spp);
  if (change.preset) o.vct.set_preset(*change.preset);
  if (change.tile) o.tile_size = *change.tile;
  if (change.schedule) o.policy.schedule = *change.schedule == "static" ? Schedule::static_split : Schedule::dynamic;
  if (change.size) std::tie(o.width, o.height) = std::pair{(*change.size)[0], (*change.size)[1]};
  if (change.stereo) {
    o.stereo = *change.stereo;
    o.ipd = o.stereo ? (current_.ipd > 0 ? current_.ipd : -1.0f) : 0.0f;
  }
  if (!pending_) before_pending_ = current_;
  pending_ = o;
}

void LiveSession::frame_done(uint64_t connection, uint64_t frame_id, bool sent) {
  std::lock_guard lock(mutex_);
  if (connection != driver_) return;
  const auto f = frames_.find(frame_id);
  const auto q = queued_at_.find(frame_id);
  if (f == frames_.end() || q == queued_at_.end()) return;
  f->second.send_ms = sent ? ms_between(q->second, Clock::now()) : -1;
}

// ---- the session's thread ----

void LiveSession::frame_completed(const CompletedFrame& frame) {
  const auto& o = frame.options;
  const auto& grid = frame.grid;
  LiveFrameStats stats;
  stats.pose_id = frame.pose.id;
  stats.pose_wait_ms = std::max(0.0, ms_between(frame.pose.acquired, frame.opened));
  for (const auto& w : frame.record.workers) stats.render_ms = std::max(stats.render_ms, w.busy_ms);
  stats.composite_ms = frame.composite_ms;
  stats.wire_ms = std::max(0.0, frame.record.frame_ms - stats.render_ms - stats.composite_ms);
  {
    std::lock_guard lock(mutex_);
    stats.fresh = frame.pose.refinement == 0 && frame.pose.id != last_fresh_pose_;
    if (stats.fresh) last_fresh_pose_ = frame.pose.id;
    frames_[frame.record.frame_id] = stats;
    recent_frames_.push_back(frame.completed);
  }
  WorkerLoad load{frame.completed, {}};
  for (const auto& w : frame.record.workers) load.tiles_busy.emplace_back(w.tiles, w.busy_ms);
  recent_load_.push_back(std::move(load));

  EncodeJob job;
  job.frame_id = frame.record.frame_id;
  job.pose_id = frame.pose.id;
  job.refinement = frame.pose.refinement;
  job.accumulate = accumulates_here(o.mode);
  job.path_samples = uint32_t(std::lround(frame.record.samples_per_pixel));
  job.image = frame.image;
  job.header = {{"type", "frame"},
                {"frame", frame.record.frame_id},
                {"pose_id", frame.pose.id},
                {"position", {frame.pose.pose.position[0], frame.pose.pose.position[1], frame.pose.pose.position[2]}},
                {"orientation",
                 {frame.pose.pose.orientation[0], frame.pose.pose.orientation[1], frame.pose.pose.orientation[2], frame.pose.pose.orientation[3]}},
                {"eyes", grid.eyes()},
                {"width", grid.width()},
                {"height", grid.height()},
                {"tile", o.tile_size},
                {"mode", o.mode},
                {"owners", frame.owners},
                {"stages",
                 {{"pose_wait", stats.pose_wait_ms}, {"render", stats.render_ms}, {"wire", stats.wire_ms}, {"composite", stats.composite_ms}}}};
  {
    std::lock_guard lock(encode_mutex_);
    encode_queue_.push_back(std::move(job));
  }
  encode_ready_.notify_one();
}

void LiveSession::encode_loop() {
  BandedJpegEncoder encoder(options_.jpeg_quality, options_.jpeg_threads);
  SampleAccumulator accumulator;
  for (;;) {
    std::deque<EncodeJob> jobs;
    {
      std::unique_lock lock(encode_mutex_);
      encode_ready_.wait(lock, [&] { return encode_stop_ || !encode_queue_.empty(); });
      if (encode_stop_) return;
      jobs.swap(encode_queue_);
    }
    // Only the newest pose's frames matter: jobs of a pose that a newer one replaced are dropped
    // unseen. A pose's first frame goes out as it is and is kept aside; it joins the mean only when
    // the pose holds and its first jittered refinement arrives, so a moving head (a new pose every
    // frame) costs one encode a frame and no accumulation.
    size_t first = 0;  // the newest pose's first job in this batch
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (jobs[i].pose_id != jobs.back().pose_id)
        first = i + 1;
      else if (jobs[i].refinement == 0)
        first = i;
    }
    uint32_t samples = 1;
    double accumulate_ms = 0;
    auto accumulate = [&](EncodeJob& job) {
      const auto start = Clock::now();
      if (job.refinement == 0) {
        accumulator.reset();
        base_ = std::move(job.image);  // added with the pose's first refinement, if one comes
        base_pose_ = job.pose_id;
        return uint32_t(1);
      }
      if (job.pose_id != base_pose_) return accumulator.samples();  // its pose's first frame never came
      try {
        if (!base_.empty()) accumulator.add(base_);
        accumulator.add(job.image);
      } catch (const std::exception&) {  // the size changed under a held pose: start over
        accumulator.reset();
        accumulator.add(job.image);
      }
      base_ = ImageRgba8();
      accumulate_ms = ms_between(start, Clock::now());
      return accumulator.samples();
    };
    for (size_t i = first; i + 1 < jobs.size(); ++i)
      if (jobs[i].accumulate) accumulate(jobs[i]);
    EncodeJob& newest = jobs.back();
    const bool first_of_pose = !newest.accumulate || newest.refinement == 0;
    if (!newest.accumulate) {
      accumulator.reset();
      base_ = ImageRgba8();
      samples = std::max(1u, newest.path_samples);
      if (samples >= options_.max_path_samples) poses_.enough_samples(newest.pose_id);
    } else if (!first_of_pose) {
      samples = accumulate(newest);
    }
    if (first_of_pose) accumulate_ms = 0;
    try {
      const auto start = Clock::now();
      const std::vector<JpegBand> bands = encoder.encode(first_of_pose ? newest.image : accumulator.resolve());
      const double encode_ms = ms_between(start, Clock::now());
      newest.header["samples"] = samples;
      newest.header["stages"]["accumulate"] = accumulate_ms;
      newest.header["stages"]["encode"] = encode_ms;
      auto message = std::make_shared<const std::string>(pack_frame_message(std::move(newest.header), bands));
      {
        std::lock_guard lock(mutex_);
        if (auto f = frames_.find(newest.frame_id); f != frames_.end()) {
          f->second.samples = samples;
          f->second.encode_ms = encode_ms;
          f->second.accumulate_ms = accumulate_ms;
        }
        queued_at_[newest.frame_id] = Clock::now();
        while (queued_at_.size() > kPoseMemory) queued_at_.erase(queued_at_.begin());
        ++frames_sent_;
        last_samples_ = samples;
        newest_frame_id_ = newest.frame_id;
        newest_frame_ = message;
      }
      server_->broadcast_frame(newest.frame_id, std::move(message));
      if (newest.accumulate && first_of_pose) accumulate(newest);  // keeps the image aside, no work
    } catch (const std::exception& e) {
      net::log_warning(std::string("live: frame ") + std::to_string(newest.frame_id) + " not sent: " + e.what());
    }
  }
}

void LiveSession::worker_changed(const WorkerChange& change) {
  if (workers_.size() <= size_t(change.worker)) workers_.resize(size_t(change.worker) + 1);
  WorkerState& w = workers_[size_t(change.worker)];
  w.name = change.name;
  if (!change.device.empty()) w.device = change.device;
  std::string text;
  switch (change.kind) {
    case WorkerChange::Kind::ready:
      w.state = "ready";
      text = "worker " + change.name + " ready on " + change.device;
      break;
    case WorkerChange::Kind::rejoined:
      w.state = "ready";
      text = "worker " + change.name + " rejoined";
      break;
    case WorkerChange::Kind::lost:
      w.state = "lost";
      text = "lost worker " + change.name + ": " + change.reason;
      break;
    case WorkerChange::Kind::failed:
      w.state = w.state == "ready" ? "lost" : "connecting";
      text = "worker " + change.name + " unavailable: " + change.reason;
      break;
  }
  event(text);
}

void LiveSession::event(const std::string& text) {
  server_->broadcast_text(json{{"type", "event"}, {"t", ms_between(started_, Clock::now())}, {"text", text}}.dump());
}

void LiveSession::tick() {
  const auto now = Clock::now();
  if (now < next_status_) return;
  next_status_ = now + kStatusInterval;
  while (!recent_load_.empty() && now - recent_load_.front().at > kRateWindow) recent_load_.pop_front();
  const double window_s = std::chrono::duration<double>(kRateWindow).count();
  json workers = json::array();
  for (size_t i = 0; i < workers_.size(); ++i) {
    double tiles = 0, busy = 0;
    for (const auto& load : recent_load_)
      if (i < load.tiles_busy.size()) {
        tiles += load.tiles_busy[i].first;
        busy += load.tiles_busy[i].second;
      }
    workers.push_back({{"name", workers_[i].name},
                       {"device", workers_[i].device},
                       {"state", workers_[i].state},
                       {"tiles_per_s", tiles / window_s},
                       {"busy_pct", std::min(100.0, busy / (window_s * 10.0))},
                       {"scene", scene_.name}});
  }
  std::lock_guard lock(mutex_);
  while (!recent_frames_.empty() && now - recent_frames_.front() > kRateWindow) recent_frames_.pop_front();
  while (!recent_latency_.empty() && now - recent_latency_.front().first > kLatencyWindow) recent_latency_.pop_front();
  std::vector<double> latency;
  for (const auto& [at, ms] : recent_latency_) latency.push_back(ms);
  while (!recent_page_.empty() && now - recent_page_.front().at > kLatencyWindow) recent_page_.pop_front();
  std::vector<double> network, decode, draw;
  for (const auto& p : recent_page_) {
    network.push_back(p.network);
    decode.push_back(p.decode);
    draw.push_back(p.draw);
  }
  server_->broadcast_text(json{{"type", "status"},
                               {"fps", double(recent_frames_.size()) / window_s},
                               {"latency_ms", {{"median", percentile(latency, 0.5)}, {"p95", percentile(latency, 0.95)}}},
                               {"page_ms",
                                {{"network", percentile(network, 0.5)}, {"decode", percentile(decode, 0.5)}, {"draw", percentile(draw, 0.5)}}},
                               {"frames", frames_sent_},
                               {"samples", last_samples_},
                               {"pages", connections_.size()},
                               {"workers", workers}}
                              .dump());
}

std::optional<SessionOptions> LiveSession::take_options() {
  std::lock_guard lock(mutex_);
  if (!pending_) return std::nullopt;
  current_ = *pending_;
  pending_.reset();
  refinement_for(current_);
  send_session_messages();
  return current_;
}

bool LiveSession::options_pending() const {
  std::lock_guard lock(mutex_);
  return pending_.has_value();
}

void LiveSession::settings_rejected(const std::string& why) {
  {
    std::lock_guard lock(mutex_);
    if (before_pending_) current_ = *before_pending_;
    refinement_for(current_);
    send_session_messages();
  }
  net::log_warning("live: settings refused: " + why);
  event("settings refused: " + why);
}

void LiveSession::send_session_messages() {
  for (const auto& [id, c] : connections_)
    if (c.greeted) server_->send_text(id, session_message(id == driver_).dump());
}

json LiveSession::settings_json(const SessionOptions& o) const {
  return {{"mode", o.mode},
          {"spp", std::max(1u, o.pathtrace.spp())},
          {"preset", o.vct.preset() ? o.vct.preset() : 5},
          {"tile", o.tile_size},
          {"schedule", o.policy.schedule == Schedule::static_split ? "static" : "dynamic"}};
}

json LiveSession::session_message(bool drives) const {
  const auto& m = scene_.manifest;
  const auto& c = m.camera();
  const float fov = current_.fov ? *current_.fov : c.vertical_fov_degrees();
  return {{"type", "session"},
          {"role", drives ? "drive" : "watch"},
          {"scene",
           {{"name", scene_.name},
            {"units_per_meter", m.scene_scale() > 0.0f ? m.scene_scale() : 1.0f},
            {"bounds", {vec3(m.bounds().min()), vec3(m.bounds().max())}},
            {"camera", {{"position", vec3(c.position())}, {"orientation", {c.qw(), c.qx(), c.qy(), c.qz()}}, {"fov", fov}}}}},
          {"size", {current_.width, current_.height}},
          {"stereo", current_.stereo || current_.ipd > 0},
          {"settings", settings_json(current_)},
          {"max_samples", accumulates_here(current_.mode) ? options_.max_samples : options_.max_path_samples}};
}

void LiveSession::finish_records(std::vector<FrameRecord>& records) {
  std::lock_guard lock(mutex_);
  for (auto& r : records)
    if (const auto f = frames_.find(r.frame_id); f != frames_.end()) r.live = f->second;
}

}  // namespace tessera::master::live
