#include "master/live/live_session.h"

#include <algorithm>
#include <cmath>

#include "common/base/error.h"
#include "common/net/log.h"
#include "master/frame/sample_accumulator.h"
#include "master/live/depth_plane.h"
#include "master/live/frame_message.h"
#include "master/live/jpeg_bands.h"
#include "master/live/live_figures.h"
#include "master/live/zlib_stream.h"
#include "master/stats/record_window.h"
#include "master/session/mode_options.h"

namespace tessera::master::live {
namespace {

using nlohmann::json;

constexpr size_t kAuxMemory = 64;                         // frames whose depth and alpha costs the status's medians cover
constexpr float kDepthNearMetres = 0.05f;                 // q = 65535 at 5 cm: closer than a headset lets the eye focus

json vec3(const tpk::Vec3& v) { return {v.x(), v.y(), v.z()}; }
json vec3(const wire::Vec3& v) { return {v.x(), v.y(), v.z()}; }
json array_json(const std::array<float, 3>& v) { return {v[0], v[1], v[2]}; }
json array_json(const std::array<float, 4>& v) { return {v[0], v[1], v[2], v[3]}; }

json views_json(const RenderedEyes& eyes) {
  json views = json::array();
  for (const EyeView& v : eyes.views)
    views.push_back({{"position", array_json(v.pose.position)},
                     {"orientation", array_json(v.pose.orientation)},
                     {"frustum", {v.frustum.left, v.frustum.right, v.frustum.bottom, v.frustum.top}}});
  return views;
}

// Little-endian bytes of the inverse depths, as PROTOCOL.md's depth section holds them.
std::vector<uint8_t> depth_bytes(const std::vector<uint16_t>& depth) {
  std::vector<uint8_t> bytes(depth.size() * 2);
  for (size_t i = 0; i < depth.size(); ++i) {
    bytes[2 * i] = uint8_t(depth[i] & 0xff);
    bytes[2 * i + 1] = uint8_t(depth[i] >> 8);
  }
  return bytes;
}

std::vector<uint8_t> alpha_plane(const ImageRgba8& image) {
  const auto pixels = image.pixels();
  std::vector<uint8_t> alpha(pixels.size() / ImageRgba8::kChannels);
  for (size_t i = 0; i < alpha.size(); ++i) alpha[i] = pixels[i * ImageRgba8::kChannels + 3];
  return alpha;
}

bool accumulates_here(const std::string& mode) { return mode == "raytrace" || mode == "vct"; }

}  // namespace

LiveSession::LiveSession(LiveOptions options, const SceneFile& scene, const SessionOptions& initial, LivePoseSource& poses)
    : options_(std::move(options)), scene_(scene), poses_(poses), current_(initial), clock_(initial.time_scale, initial.scene_time_start) {
  if (scene_.instances > 0) picker_ = std::make_unique<ScenePicker>(scene_);
  poses_.set_motion_check([this](const PoseSample& held) { return held_view_moved(held); });
  JpegEncoder check(options_.jpeg_quality);  // refuses a bad quality before anything starts
  if (options_.max_samples < 1 || options_.max_samples > 4096) throw Error("--max-samples must be in 1..4096");
  current_.stereo = current_.stereo || current_.ipd > 0;
  server_ = std::make_unique<HttpServer>(options_.server, *this);
  // The pages' encodes, each frame's strips side by side (the encoding thread takes strips too).
  stream_pool_ = std::make_unique<TaskPool>(video::encoder_threads(options_.stream.encoder_threads));
  refinement_for(current_);
}

LiveSession::~LiveSession() {
  poses_.set_motion_check({});
  stop();
}

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
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, c] : connections_)
      if (c.stream) c.stream->close();
  }
  stream_pool_.reset();  // the encodes under way finish first
  server_->stop(reason);
}

std::string LiveSession::url() const { return server_->url(); }  // a wildcard bind names a LAN address

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
  const std::string peer = it->second.peer;
  if (it->second.stream) it->second.stream->close();
  connections_.erase(it);
  if (driver_ == connection) hand_over_driving(peer);
  update_depth();
}

// The page that came last among those that wanted to drive (else the newest page) drives now: a
// headset whose page reloads, or a phone that locks, does not leave the session without a driver.
void LiveSession::hand_over_driving(const std::string& former) {
  driver_ = 0;
  pose_times_.clear();  // the next driver's pose ids and clock are its own
  const Connection* next = nullptr;
  for (const auto& [id, c] : connections_) {
    if (!c.greeted) continue;
    if (!next || (c.wants_drive != next->wants_drive ? c.wants_drive : c.greeted_order > next->greeted_order)) {
      next = &c;
      driver_ = id;
    }
  }
  if (!next) {
    event("the driving page left");
    return;
  }
  send_text(driver_, session_message(driver_).dump());
  net::log_info("live: the driving page " + former + " left; " + next->peer + " drives now");
  event("the driving page left; page " + next->peer + (next->client.empty() ? "" : " (" + next->client + ")") + " drives now");
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
    c.wants_drive = hello->drive;
    c.depth = hello->depth;
    c.greeted_order = ++greetings_;
    if (hello->drive && driver_ == 0) driver_ = connection;
    update_depth();
    open_stream(connection, c, *hello);
    send_text(connection, session_message(connection).dump());
    // The view as it is now, not an empty one until the pose moves.
    if (c.stream) {
      if (newest_shown_) c.stream->offer(newest_shown_);
      return;
    }
    const auto& newest = c.depth && newest_frame_depth_ ? newest_frame_depth_ : newest_frame_;
    if (newest) server_->send_frame(connection, newest_frame_id_, newest);
    return;
  }
  if (const auto* key = std::get_if<KeyframeRequest>(&parsed)) {
    net::log_info("live: page " + c.peer + " asks for a key frame" + (key->reason.empty() ? "" : ": " + key->reason));
    if (c.stream) c.stream->keyframe_requested();
    return;
  }
  if (std::holds_alternative<TakeControl>(parsed)) {
    const uint64_t former = driver_;
    driver_ = connection;
    if (former && former != connection) send_text(former, session_message(former).dump());
    send_text(connection, session_message(connection).dump());
    event("page " + c.peer + " (" + c.client + ") took control");
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
    if (c.stream) c.stream->displayed(shown->frame, shown->received, shown->t);  // every page's own stream's acknowledgement
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
    send_text(connection, session_message(connection).dump());  // what is still in force
    return;
  }
  if (std::holds_alternative<ClockChange>(parsed) || std::holds_alternative<Pick>(parsed) || std::holds_alternative<Move>(parsed))
    return motion_message(connection, parsed);
  if (std::holds_alternative<Place>(parsed) || std::holds_alternative<Light>(parsed) || std::holds_alternative<RefusedRequest>(parsed)) {
    const auto* refused = std::get_if<RefusedRequest>(&parsed);
    if (connection != driver_ && !(refused && refused->type == "pick")) {  // a watcher's AR page does not move the driver's scene
      const std::string what = refused && (refused->type == "clock" || refused->type == "move") ? "the clock and moves" : "place and light";
      send_text(connection, json{{"type", "event"}, {"t", ms_between(started_, Clock::now())},
                                 {"text", what + " come from the driving page only"}}.dump());
      return;
    }
    if (const auto* p = std::get_if<Place>(&parsed)) return place(*p);
    if (const auto* l = std::get_if<Light>(&parsed)) return light(*l);
    net::log_warning("live: " + refused->type + " refused: " + refused->reason);
    event(refused->type + " refused: " + refused->reason);
    return;
  }
}

// Depth is rendered while a connected page reprojects.
void LiveSession::update_depth() {
  const bool wanted = std::any_of(connections_.begin(), connections_.end(), [](const auto& c) { return c.second.greeted && c.second.depth; });
  if (wanted == aux_.depth()) return;
  aux_.set_depth(wanted);
  if (wanted) {
    const float units_per_meter = scene_.manifest.scene_scale() > 0.0f ? scene_.manifest.scene_scale() : 1.0f;
    aux_.set_depth_near(kDepthNearMetres * units_per_meter);
  } else {
    aux_.clear_depth_near();
  }
  frame_options_changed();
}

// The next frame renders with them; a held pose renders afresh (its refinements so far show the
// scene as it was), and the pages see what is in force.
void LiveSession::frame_options_changed() {
  if (!pending_) refinement_for(current_);
  send_session_messages();
}

// A pose's first frame shows the scene as it is now; its refinements show that instant again.
void LiveSession::update_frame_options(SessionOptions& options, const PoseSample& pose) {
  std::lock_guard lock(mutex_);
  options.aux = aux_;
  options.sun = sun_;
  if (pose.refinement == 0 || !held_instant_ || held_instant_->pose_id != pose.id)
    held_instant_ = SceneInstant{pose.id, clock_.now(), placed_, {}};
  options.scene_time = held_instant_->time;
  options.instance_transforms.clear();
  for (const auto& [instance, world] : held_instant_->placed) options.instance_transforms.push_back({instance, world});
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
  if (change.transparent && *change.transparent != aux_.transparent()) {
    aux_.set_transparent(*change.transparent);
    if (!pending_) refinement_for(current_);
  }
  const bool structural = change.mode || change.spp || change.preset || change.tile || change.schedule || change.size || change.stereo;
  if (!structural) return send_session_messages();  // a background alone waits for no frame in flight
  if (!pending_) before_pending_ = current_;
  pending_ = o;
}

void LiveSession::frame_done(uint64_t connection, uint64_t frame_id, bool sent) {
  std::lock_guard lock(mutex_);
  const auto c = connections_.find(connection);
  if (c != connections_.end() && c->second.stream) {
    const size_t bytes = c->second.stream->written(frame_id, sent);
    if (sent) count_page_bytes(bytes);
  } else if (sent) {
    const auto size = frame_sizes_.find(frame_id);
    if (size != frame_sizes_.end() && c != connections_.end())
      count_page_bytes(c->second.depth && size->second.second ? size->second.second : size->second.first);
  }
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
    // As many as the session keeps records of (an hour's frames would be held otherwise).
    while (frames_.size() > 2 * kLiveRecordsKept) frames_.erase(frames_.begin());
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
  job.depth = frame.depth;
  job.depth_near = frame.request.aux().depth_near();
  job.transparent = frame.request.aux().transparent();
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
                {"views", views_json(frame.eyes)},
                {"guard_band", frame.eyes.guard_band_degrees},
                {"scene_time", frame.request.scene_time_s()},
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
        base_ = std::make_shared<const ImageRgba8>(std::move(job.image));  // added with the pose's first refinement, if one comes
        base_pose_ = job.pose_id;
        return uint32_t(1);
      }
      if (job.pose_id != base_pose_) return accumulator.samples();  // its pose's first frame never came
      try {
        if (base_) accumulator.add(*base_);
        accumulator.add(job.image);
      } catch (const std::exception&) {  // the size changed under a held pose: start over
        accumulator.reset();
        accumulator.add(job.image);
      }
      base_.reset();
      accumulate_ms = ms_between(start, Clock::now());
      return accumulator.samples();
    };
    for (size_t i = first; i + 1 < jobs.size(); ++i)
      if (jobs[i].accumulate) accumulate(jobs[i]);
    EncodeJob& newest = jobs.back();
    const bool first_of_pose = !newest.accumulate || newest.refinement == 0;
    if (!newest.accumulate) {
      accumulator.reset();
      base_.reset();
      samples = std::max(1u, newest.path_samples);
      if (samples >= options_.max_path_samples) poses_.enough_samples(newest.pose_id);
    } else if (!first_of_pose) {
      samples = accumulate(newest);
    }
    if (first_of_pose) accumulate_ms = 0;
    try {
      const auto start = Clock::now();
      const auto shown_image = std::make_shared<const ImageRgba8>(first_of_pose ? std::move(newest.image) : accumulator.resolve());
      const ImageRgba8& shown = *shown_image;
      if (options_.stream.reference && newest.frame_id % options_.stream.reference->every == 0)
        write_reference_frame(*options_.stream.reference, newest.frame_id, shown);  // before it is sent
      const bool jpeg = [&] {
        std::lock_guard lock(mutex_);
        return jpeg_wanted();
      }();
      // RGB as it is: premultiplied when transparent. Only video pages: no JPEG.
      const std::vector<JpegBand> bands = jpeg ? encoder.encode(shown) : std::vector<JpegBand>();
      const double encode_ms = ms_between(start, Clock::now());
      // Depth (the same primary rays in every refinement of a pose) and the shown image's alpha.
      const auto aux_start = Clock::now();
      AuxCost aux;
      std::string depth, alpha;
      const unsigned threads = options_.jpeg_threads ? options_.jpeg_threads : std::max(1u, std::thread::hardware_concurrency());
      uint32_t depth_scale = 1;
      if (!newest.depth.empty()) {
        const uint32_t eye_width = newest.header.value("width", 1u), height = newest.header.value("height", 1u),
                       eyes = newest.header.value("eyes", 1u);
        depth_scale = depth_plane_scale(eye_width);
        depth = zlib_compress(depth_bytes(downsample_depth(newest.depth, eye_width, height, eyes, depth_scale)), 1, threads);
      }
      if (newest.transparent) alpha = zlib_compress(alpha_plane(shown), 1, threads);
      aux.depth_bytes = depth.size();
      aux.alpha_bytes = alpha.size();
      aux.ms = depth.empty() && alpha.empty() ? 0.0 : ms_between(aux_start, Clock::now());
      newest.header["samples"] = samples;
      newest.header["stages"]["accumulate"] = accumulate_ms;
      newest.header["stages"]["encode"] = encode_ms;
      if (!depth.empty() || !alpha.empty()) newest.header["stages"]["aux"] = aux.ms;
      AuxSections sections;
      sections.alpha = newest.transparent ? &alpha : nullptr;
      auto shown_frame = std::make_shared<ShownFrame>();
      shown_frame->frame_id = newest.frame_id;
      shown_frame->header = newest.header;
      shown_frame->image = shown_image;
      shown_frame->refinement = samples > 1;
      if (!depth.empty()) {
        shown_frame->depth = std::make_shared<const std::string>(depth);
        shown_frame->depth_near = newest.depth_near;
        shown_frame->depth_scale = depth_scale;
      }
      if (newest.transparent) shown_frame->alpha = std::make_shared<const std::string>(alpha);
      std::shared_ptr<const std::string> plain, with_depth;
      if (jpeg) plain = std::make_shared<const std::string>(pack_frame_message(newest.header, bands, sections));
      if (jpeg && !depth.empty()) {
        sections.depth = &depth;
        sections.depth_near = newest.depth_near;
        sections.depth_scale = depth_scale;
        with_depth = std::make_shared<const std::string>(pack_frame_message(newest.header, bands, sections));
      }
      {
        std::lock_guard lock(mutex_);
        if (auto f = frames_.find(newest.frame_id); f != frames_.end()) {
          f->second.samples = samples;
          if (jpeg) f->second.encode_ms = encode_ms;
          f->second.accumulate_ms = accumulate_ms;
          f->second.depth_bytes = aux.depth_bytes;
          f->second.alpha_bytes = aux.alpha_bytes;
          f->second.aux_ms = aux.ms;
        }
        if (aux.depth_bytes || aux.alpha_bytes) {
          recent_aux_.emplace_back(Clock::now(), aux);
          while (recent_aux_.size() > kAuxMemory) recent_aux_.pop_front();
        }
        ++frames_sent_;
        last_samples_ = samples;
        newest_shown_ = shown_frame;
        if (jpeg) {
          const auto d = connections_.find(driver_);
          if (d == connections_.end() || !d->second.stream) queued_at_[newest.frame_id] = Clock::now();  // a video driver's: when encoded
          while (queued_at_.size() > kPoseMemory) queued_at_.erase(queued_at_.begin());
          frame_sizes_[newest.frame_id] = {plain->size(), with_depth ? with_depth->size() : 0};
          while (frame_sizes_.size() > kPoseMemory) frame_sizes_.erase(frame_sizes_.begin());
          newest_frame_id_ = newest.frame_id;
          newest_frame_ = plain;
          newest_frame_depth_ = with_depth;
          send_frame_to_pages(newest.frame_id, plain, with_depth);
        }
        offer_to_streams(shown_frame);
      }
      if (newest.accumulate && first_of_pose) {  // kept aside: it joins the mean with the pose's first refinement
        accumulator.reset();
        base_ = shown_image;
        base_pose_ = newest.pose_id;
      }
    } catch (const std::exception& e) {
      net::log_warning(std::string("live: frame ") + std::to_string(newest.frame_id) + " not sent: " + e.what());
    }
  }
}

// Pages that reprojects get the message with the depth section; the others the one without.
void LiveSession::send_frame_to_pages(uint64_t frame_id, const std::shared_ptr<const std::string>& plain,
                                      const std::shared_ptr<const std::string>& with_depth) {
  for (const auto& [id, c] : connections_)
    if (c.greeted && !c.stream) server_->send_frame(id, frame_id, c.depth && with_depth ? with_depth : plain);
}

void LiveSession::count_page_bytes(size_t bytes) {
  std::lock_guard lock(bytes_mutex_);
  const auto now = Clock::now();
  page_bytes_.emplace_back(now, bytes);
  while (!page_bytes_.empty() && now - page_bytes_.front().first > kRateWindow) page_bytes_.pop_front();
}

// Text messages are counted as they are queued (they are small; frames, the bulk, as they are written).
void LiveSession::send_text(uint64_t connection, std::string message) {
  count_page_bytes(message.size());
  server_->send_text(connection, std::move(message));
}

void LiveSession::broadcast_text(std::string message) {
  count_page_bytes(message.size() * server_->connections());
  server_->broadcast_text(std::move(message));
}

void LiveSession::worker_changed(const WorkerChange& change) {
  if (workers_.size() <= size_t(change.worker)) workers_.resize(size_t(change.worker) + 1);
  WorkerState& w = workers_[size_t(change.worker)];
  w.name = change.name;
  if (!change.device.empty()) w.device = change.device;
  if (!change.scene_memory.empty()) w.scene_memory = change.scene_memory;
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
  broadcast_text(json{{"type", "event"}, {"t", ms_between(started_, Clock::now())}, {"text", text}}.dump());
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
    if (c.greeted) send_text(id, session_message(id).dump());
}

json LiveSession::settings_json(const SessionOptions& o) const {
  return {{"mode", o.mode},
          {"spp", std::max(1u, o.pathtrace.spp())},
          {"preset", o.vct.preset() ? o.vct.preset() : 5},
          {"tile", o.tile_size},
          {"schedule", o.policy.schedule == Schedule::static_split ? "static" : "dynamic"}};
}

json LiveSession::session_message(uint64_t connection) const {
  const bool drives = connection == driver_;
  const auto& m = scene_.manifest;
  const auto& c = m.camera();
  const float fov = current_.fov ? *current_.fov : c.vertical_fov_degrees();
  json message = {{"type", "session"},
          {"role", drives ? "drive" : "watch"},
          {"scene",
           {{"name", scene_.name},
            {"units_per_meter", m.scene_scale() > 0.0f ? m.scene_scale() : 1.0f},
            {"bounds", {vec3(m.bounds().min()), vec3(m.bounds().max())}},
            {"camera", {{"position", vec3(c.position())}, {"orientation", {c.qw(), c.qx(), c.qy(), c.qz()}}, {"fov", fov}}}}},
          {"size", {current_.width, current_.height}},
          {"stereo", current_.stereo || current_.ipd > 0},
          {"settings", settings_json(current_)},
          {"max_samples", accumulates_here(current_.mode) ? options_.max_samples : options_.max_path_samples},
          {"background", aux_.transparent() ? "transparent" : "opaque"},
          {"guard_band", current_.guard_band_degrees},
          {"depth", aux_.depth()},
          {"shadow_catcher", aux_.has_shadow_catcher_height() ? json(aux_.shadow_catcher_height()) : json(nullptr)},
          {"sun", sun_ ? json{{"direction", vec3(sun_->direction())}, {"irradiance", vec3(sun_->irradiance())}} : json(nullptr)}};
  message["clock"] = clock_json();
  message["instances"] = picker_ ? picker_->instance_count() : 0;
  message.update(stream_session(connections_.at(connection)));  // "codec" and "stream"
  return message;
}

void LiveSession::finish_records(std::vector<FrameRecord>& records) {
  std::lock_guard lock(mutex_);
  for (auto& r : records)
    if (const auto f = frames_.find(r.frame_id); f != frames_.end()) r.live = f->second;
}

}  // namespace tessera::master::live
