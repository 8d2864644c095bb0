#include "master/session/render_session.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/base/error.h"
#include "common/base/hash.h"
#include "common/base/version.h"
#include "common/net/log.h"
#include "common/net/protocol.h"
#include "common/render/stereo.h"
#include "master/cluster/worker_version.h"
#include "master/session/live_view.h"

namespace tessera::master {
namespace {

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::string seconds_text(std::chrono::milliseconds d) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", double(d.count()) / 1000.0);
  return text;
}

}  // namespace

RenderSession::RenderSession(SessionOptions options, Cluster& cluster, const SceneFile& scene, PoseSource& poses)
    : cluster_(cluster), scene_(scene), poses_(poses), scheduler_(options.policy, *this) {
  apply_options(std::move(options));
  if (options_.out_dir) writer_ = std::make_unique<FrameWriter>(*options_.out_dir, options_.overlay);
  workers_.resize(cluster.size());
  for (size_t i = 0; i < cluster.size(); ++i) workers_[i].name = cluster.address(int(i)).text();
  if (options_.frames == 0 && poses_.length()) options_.frames = *poses_.length();
  if (options_.status_line) status_ = std::make_unique<ProgressBar>("frames");
}

RenderSession::~RenderSession() = default;

void RenderSession::apply_options(SessionOptions options) {
  options.stereo = options.stereo || options.ipd > 0;
  if (options.stereo && options.ipd < 0) options.ipd = default_ipd(scene_.manifest);
  if (!options.stereo) options.ipd = 0;
  // Fails early on sizes the protocol refuses.
  net::TileGrid(options.width, options.height, options.tile_size, options.stereo ? 2 : 1);
  options_ = std::move(options);
  tile_pairs_ = options_.stereo && options_.mode == "pathtrace";
}

// Live settings change between frames: new frames wait until the open ones are done.
void RenderSession::apply_pending_options() {
  if (!observer_ || !open_.empty() || !observer_->options_pending()) return;
  auto options = observer_->take_options();
  if (!options) return;
  try {
    const bool policy_changed = options->policy.schedule != options_.policy.schedule ||
                                options->policy.inflight != options_.policy.inflight ||
                                options->policy.balance != options_.policy.balance || options->tile_size != options_.tile_size ||
                                options->width != options_.width || options->height != options_.height ||
                                options->stereo != options_.stereo || options->policy.tile_affinity != options_.policy.tile_affinity;
    previous_options_ = options_;
    apply_options(std::move(*options));
    if (policy_changed) scheduler_.set_policy(options_.policy);
  } catch (const std::exception& e) {
    observer_->settings_rejected(e.what());
  }
}

// A newer pose waits while refinements (more samples of the same view) are in flight: they are
// worth nothing now, so they are cancelled and the new pose's frame starts at once.
void RenderSession::supersede_refinements() {
  if (open_.empty() || !poses_.newer_pose_waiting()) return;
  supersede([](const OpenFrame& frame) { return frame.pose.refinement > 0; });
}

// New settings wait for the frames in flight, which render with the old ones and are worth nothing
// now: they are cancelled, so a change (or a size that turns out far too large) takes effect at once
// instead of after the slowest of them.
void RenderSession::supersede_for_settings() {
  if (open_.empty() || !observer_ || !observer_->options_pending()) return;
  supersede([](const OpenFrame&) { return true; });
}

void RenderSession::supersede(const std::function<bool(const OpenFrame&)>& stale) {
  for (auto it = open_.begin(); it != open_.end();) {
    if (!stale(it->second)) {
      ++it;
      continue;
    }
    scheduler_.close_frame(it->first);  // the workers holding its tiles drop them
    it = open_.erase(it);
    ++superseded_;
  }
}

RunSummary RenderSession::run() {
  started_ = Clock::now();
  poses_.set_wake([this] { cluster_.wake(); });
  try {
    wait_for_workers();
    started_ = Clock::now();  // frame rates count from the first frame, not from connecting
    auto next_check = Clock::now();
    bool told_stop = false;
    for (;;) {
      // After every event: a finished frame makes room for the next one at once.
      while (open_next_frame()) {
      }
      if (stop_requested_ && !told_stop) {
        told_stop = true;
        net::log_info("interrupted: finishing the " + std::to_string(open_.size()) + " frames in flight");
      }
      const bool more_to_open = !stop_requested_ && !poses_ended_ && (options_.frames == 0 || frames_opened_ < options_.frames);
      if (open_.empty() && !more_to_open) break;
      if (auto event = cluster_.next_event(next_check)) {
        // A burst of events (a worker's batch of tiles) frees several slots: they are refilled
        // together, so the worker gets one assignment to render as one batch, not one per tile.
        scheduler_.hold();
        handle(*event);
        while (auto more = cluster_.next_event(Clock::now())) handle(*more);
        scheduler_.release();
      }
      if (Clock::now() >= next_check) {
        check_deadlines();
        update_status();
        if (observer_) observer_->tick();
        next_check = Clock::now() + std::chrono::milliseconds(50);
      }
    }
    if (status_) status_->finish();
    if (writer_) writer_->finish();
  } catch (...) {
    poses_.set_wake({});
    if (status_) status_->finish();
    if (observer_) observer_->finish_records(records_);
    if (options_.stats_path) write_stats_file();
    throw;
  }
  poses_.set_wake({});
  if (superseded_) net::log_info(std::to_string(superseded_) + " frames cancelled for newer poses or settings");
  if (observer_) observer_->finish_records(records_);
  if (options_.stats_path) write_stats_file();
  return summary();
}

void RenderSession::wait_for_workers() {
  auto deadline = Clock::now() + options_.startup_timeout;
  std::vector<bool> settled(workers_.size(), false);
  while (Clock::now() < deadline && std::count(settled.begin(), settled.end(), false) > 0) {
    // A live session starts once one worker is ready and the others had a few seconds more: someone
    // is looking at the page, and a late worker (a scene to load, an address that never answers)
    // joins when it is ready, as a rejoining one does. Runs that measure wait for all of them.
    if (observer_ && scheduler_.ready_workers() > 0)
      deadline = std::min(deadline, first_ready_ + kLiveStartGrace);
    if (stop_requested_) throw Error("interrupted while connecting to the workers");
    // short waits: Ctrl-C (an atomic the signal handler sets, nothing that could wake us) is seen at once
    auto event = cluster_.next_event(std::min(deadline, Clock::now() + std::chrono::milliseconds(200)));
    if (!event) continue;  // timed out, or woken early (a live pose arrived): keep waiting until the deadline
    const int w = event->worker;
    if (event->kind == LinkEvent::Kind::ready || event->kind == LinkEvent::Kind::failed) settled[size_t(w)] = true;
    if (event->kind == LinkEvent::Kind::ready && scheduler_.ready_workers() == 0) first_ready_ = Clock::now();
    handle(*event);
  }
  if (stop_requested_) throw Error("interrupted while connecting to the workers");
  if (scheduler_.ready_workers() == 0) throw Error("no worker could be used: " + failures());
}

std::string RenderSession::failures() const {
  std::string text;
  for (const auto& w : workers_) {
    if (w.ready) continue;
    if (!text.empty()) text += "; ";
    text += w.name + ": " + (w.last_failure.empty() ? "not ready yet" : w.last_failure);
  }
  return text;
}

bool RenderSession::open_next_frame() {
  if (stop_requested_ || poses_ended_) return false;
  if (options_.frames && frames_opened_ >= options_.frames) return false;
  supersede_refinements();
  supersede_for_settings();
  apply_pending_options();
  if (observer_ && observer_->options_pending()) return false;  // drain first
  if (open_.size() >= std::max(1u, options_.pipeline)) return false;
  if (!open_.empty() && !scheduler_.fully_assigned(open_.rbegin()->first)) return false;
  if (scheduler_.ready_workers() == 0) return false;
  PoseSource::Offer offer = poses_.poll();
  if (offer.ended) poses_ended_ = true;
  if (!offer.pose) return false;
  std::optional<PoseSample>& pose = offer.pose;
  const uint64_t id = frames_opened_ + 1;  // 0 means "no frame" on the wire
  OpenFrame& frame = open_[id];
  frame.index = frames_opened_++;
  frame.pose = *pose;
  frame.opened = Clock::now();
  if (observer_) observer_->update_frame_options(options_);
  const bool stereo = options_.stereo;
  const float fov = options_.fov ? *options_.fov : scene_.manifest.camera().vertical_fov_degrees();
  frame.eyes = rendered_eyes(*pose, {options_.width, options_.height, fov, stereo, options_.ipd, options_.guard_band_degrees,
                                     guard_band_possible()});
  const net::TileGrid grid(frame.eyes.width, frame.eyes.height, options_.tile_size, stereo ? 2 : 1);
  // Scheduling units: tiles, or (pathtrace stereo) tile pairs named by their left eye's id.
  const uint32_t units = tile_pairs_ ? grid.tiles_per_eye() : grid.tile_count();
  frame.assembler = std::make_shared<FrameAssembler>(grid, options_.aux.depth());
  frame.sent.assign(units, frame.opened);
  frame.batches.assign(workers_.size(), 0.0);
  frame.record.stages.pose_wait = ms_between(pose->acquired, frame.opened);

  wire::FrameRequest& r = frame.request;
  r.set_frame_id(id);
  r.set_scene_hash(scene_.hash);
  auto& p = *r.mutable_pose();
  p.mutable_position()->set_x(pose->pose.position[0]);
  p.mutable_position()->set_y(pose->pose.position[1]);
  p.mutable_position()->set_z(pose->pose.position[2]);
  p.mutable_orientation()->set_w(pose->pose.orientation[0]);
  p.mutable_orientation()->set_x(pose->pose.orientation[1]);
  p.mutable_orientation()->set_y(pose->pose.orientation[2]);
  p.mutable_orientation()->set_z(pose->pose.orientation[3]);
  p.set_time(pose->time);
  r.mutable_eyes()->set_layout(stereo ? wire::Eyes::STEREO : wire::Eyes::MONO);
  r.mutable_eyes()->set_ipd(options_.ipd);
  r.mutable_projection()->set_vertical_fov_degrees(fov);
  if (const auto gaze = pose->gaze ? pose->gaze : options_.gaze) {
    const auto point = frame.eyes.rendered_point(*gaze);  // the same scene point in the wider image
    r.mutable_gaze()->set_x(point[0]);
    r.mutable_gaze()->set_y(point[1]);
  }
  r.mutable_image()->set_width(frame.eyes.width);
  r.mutable_image()->set_height(frame.eyes.height);
  r.mutable_image()->set_tile_size(options_.tile_size);
  r.set_reply(options_.policy.schedule == Schedule::static_split ? wire::BATCH : wire::EACH_TILE);
  r.set_encoding(options_.encoding);
  r.set_zstd_level(options_.zstd_level);
  set_live_view(r, *pose, frame.eyes);
  if (options_.aux.depth() || options_.aux.transparent() || options_.aux.has_shadow_catcher_height()) *r.mutable_aux() = options_.aux;
  if (options_.sun) *r.mutable_sun() = *options_.sun;
  if (options_.mode == "pathtrace")
    *r.mutable_pathtrace() = options_.pathtrace;
  else if (options_.mode == "vct")
    *r.mutable_vct() = options_.vct;
  else
    *r.mutable_raytrace() = options_.raytrace;

  frame.record.index = frame.index;
  frame.record.frame_id = id;
  frame.record.pose_time = pose->time;
  frame.record.tiles = units;
  frame.record.mode = options_.mode;
  frame.record.width = frame.eyes.width;
  frame.record.height = frame.eyes.height;
  frame.record.tile_size = grid.tile_size();
  frame.record.stereo = stereo;
  frame.record.workers.resize(workers_.size());
  scheduler_.open_frame(id, units, lacking_features(r));
  return true;
}

// A live frame with eye views or a jittered sample goes only to workers that render them; an older
// worker would render the head pose at pixel centres instead, a wrong image in the mix. So do a
// transparent background and a replaced sun while some worker renders them (else the frames go to
// every worker without them: opaque, the scene's sun). Depth goes to every worker: one without it
// leaves its tiles' depth empty (q = 0, nothing there), a hole the page can fill.
std::set<int> RenderSession::lacking_features(const wire::FrameRequest& request) {
  std::set<int> lacking;
  const bool views = request.eye_views_size() > 0, jitter = request.aa_sample() > 0;
  const bool any_aux = std::any_of(workers_.begin(), workers_.end(), [](const WorkerView& w) { return w.aux_outputs; });
  const bool any_sun = std::any_of(workers_.begin(), workers_.end(), [](const WorkerView& w) { return w.sun_override; });
  const bool alpha = request.has_aux() && (request.aux().transparent() || request.aux().has_shadow_catcher_height());
  const bool sun = request.has_sun();
  for (size_t i = 0; i < workers_.size(); ++i) {
    WorkerView& w = workers_[i];
    const char* missing = views && !w.eye_views                  ? net::kEyeViewsFeature
                          : jitter && !w.aa_sample               ? net::kAaSampleFeature
                          : alpha && any_aux && !w.aux_outputs   ? net::kAuxOutputsFeature
                          : sun && any_sun && !w.sun_override    ? net::kSunOverrideFeature
                                                                 : nullptr;
    if (!missing) continue;
    lacking.insert(int(i));
    if (w.ready && !w.told_missing.count(missing)) {
      w.told_missing.insert(missing);
      net::log_warning(w.name + " does not list the " + missing + " feature: it is given no live frames that need it");
    }
  }
  if (((alpha && !any_aux) || (sun && !any_sun)) && !told_aux_unsupported_) {
    told_aux_unsupported_ = true;
    net::log_warning(std::string("no worker lists the ") + (alpha && !any_aux ? net::kAuxOutputsFeature : net::kSunOverrideFeature) +
                     " feature: live frames are rendered without it (opaque, the scene's own sun)");
  }
  return lacking;
}

// A head pose goes out widened by the guard band only as explicit eye views, which every ready
// worker must render (else it would render the narrower head camera into the wider image).
bool RenderSession::guard_band_possible() {
  if (options_.guard_band_degrees <= 0) return false;
  for (const WorkerView& w : workers_) {
    if (!w.ready || w.eye_views) continue;
    if (!told_no_guard_band_) {
      told_no_guard_band_ = true;
      net::log_warning(w.name + " does not list the " + net::kEyeViewsFeature + " feature: frames of the page's head pose go without the " +
                       "guard band while it is ready");
    }
    return false;
  }
  return true;
}

void RenderSession::request_tiles(int worker, uint64_t frame_id, const std::vector<uint32_t>& tiles) {
  const auto it = open_.find(frame_id);
  if (it == open_.end()) return;
  const auto start = Clock::now();
  wire::Envelope m;
  *m.mutable_frame_request() = it->second.request;
  m.mutable_frame_request()->set_encoding(workers_[size_t(worker)].encoding);
  for (uint32_t t : tiles) m.mutable_frame_request()->add_tiles(t);
  if (scheduler_.outstanding(worker) == tiles.size()) workers_[size_t(worker)].last_progress = Clock::now();
  cluster_.send(worker, m);
  const auto now = Clock::now();
  for (uint32_t t : tiles) it->second.sent[t] = now;
  it->second.record.stages.request_out += ms_between(start, now);
}

void RenderSession::assign_tiles(int worker, uint64_t frame_id, const std::vector<uint32_t>& tiles) {
  const auto start = Clock::now();
  wire::Envelope m;
  m.mutable_tile_assign()->set_frame_id(frame_id);
  for (uint32_t t : tiles) m.mutable_tile_assign()->add_tiles(t);
  if (scheduler_.outstanding(worker) == tiles.size()) workers_[size_t(worker)].last_progress = Clock::now();
  cluster_.send(worker, m);
  const auto it = open_.find(frame_id);
  if (it == open_.end()) return;
  const auto now = Clock::now();
  for (uint32_t t : tiles) it->second.sent[t] = now;
  it->second.record.stages.request_out += ms_between(start, now);
}

void RenderSession::cancel_frame(int worker, uint64_t frame_id) {
  wire::Envelope m;
  m.mutable_cancel_frame()->set_frame_id(frame_id);
  cluster_.send(worker, m);
}

void RenderSession::drop(int worker, const std::string& reason) {
  auto& w = workers_[size_t(worker)];
  if (w.dropping || !w.ready) return;
  w.dropping = true;
  cluster_.drop(worker, reason);  // a lost event follows and hands its tiles to the others
}

void RenderSession::handle(LinkEvent& event) {
  const int index = event.worker;
  WorkerView& w = workers_[size_t(index)];
  switch (event.kind) {
    case LinkEvent::Kind::ready: {
      const bool rejoin = !w.last_failure.empty();
      w.ready = true;
      w.dropping = false;
      w.device = event.scene.device();
      w.scene_memory = event.scene.scene_memory();
      w.last_progress = Clock::now();
      if (!event.info.name().empty()) w.name = cluster_.address(index).text() + " (" + event.info.name() + ")";
      {
        const std::string& host = cluster_.address(index).host;
        w.loopback = host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
      }
      {
        const auto& features = event.info.features();
        w.eye_views = std::find(features.begin(), features.end(), net::kEyeViewsFeature) != features.end();
        w.aa_sample = std::find(features.begin(), features.end(), net::kAaSampleFeature) != features.end();
        w.aux_outputs = std::find(features.begin(), features.end(), net::kAuxOutputsFeature) != features.end();
        w.sun_override = std::find(features.begin(), features.end(), net::kSunOverrideFeature) != features.end();
      }
      choose_encoding(index);
      char load[64];
      std::snprintf(load, sizeof load, "%.0f ms", event.scene.load_ms());
      std::string features;
      for (const auto& f : event.info.features()) features += (features.empty() ? "" : " ") + f;
      net::log_info(std::string(rejoin ? "rejoined: " : "ready: ") + w.name + " on " + w.device + ", " + w.scene_memory +
                    " scene memory, scene " +
                    (event.pushed ? "pushed and loaded in " : "loaded in ") + load + (features.empty() ? "" : ", features: " + features));
      if (const auto warning = worker_version_warning(w.name, event.info.version(), build_description()); !warning.empty())
        net::log_warning(warning);
      scheduler_.add_worker(index);
      if (observer_)
        observer_->worker_changed(
            {rejoin ? WorkerChange::Kind::rejoined : WorkerChange::Kind::ready, index, w.name, w.device, {}, w.scene_memory});
      return;
    }
    case LinkEvent::Kind::failed:
      if (w.last_failure != event.reason) {
        net::log_warning(w.name + ": " + event.reason);
        if (observer_) observer_->worker_changed({WorkerChange::Kind::failed, index, w.name, w.device, event.reason, {}});
      }
      w.last_failure = event.reason;
      return;
    case LinkEvent::Kind::lost: {
      w.ready = false;
      w.dropping = false;
      w.last_failure = event.reason;
      const uint32_t taken = scheduler_.remove_worker(index);
      for (auto& [id, frame] : open_) frame.record.reassigned = scheduler_.reassigned(id);
      net::log_warning("lost " + w.name + ": " + event.reason +
                       (taken ? "; its " + std::to_string(taken) + " outstanding tiles go to the other workers" : ""));
      if (observer_) observer_->worker_changed({WorkerChange::Kind::lost, index, w.name, w.device, event.reason, {}});
      return;
    }
    case LinkEvent::Kind::composited: return handle_composited(event);
    case LinkEvent::Kind::message: break;
  }
  if (!w.ready) return;
  scheduler_.heard_from(index);
  wire::Envelope& m = event.message;
  switch (m.body_case()) {
    case wire::Envelope::kHeartbeat:
      if (m.heartbeat().tiles_rendered() != w.tiles_rendered) {
        w.tiles_rendered = m.heartbeat().tiles_rendered();
        w.last_progress = Clock::now();
      }
      return;
    case wire::Envelope::kTileResult: return handle_tile(index, *m.mutable_tile_result(), event.wire_bytes, event.at);
    case wire::Envelope::kTileBatch: {
      auto& tiles = *m.mutable_tile_batch()->mutable_tiles();
      for (int i = 0; i < tiles.size(); ++i) {
        // The batch's wire bytes are spread over its tiles, so per-frame totals stay exact.
        const uint64_t share = event.wire_bytes / uint64_t(tiles.size()) + (i == 0 ? event.wire_bytes % uint64_t(tiles.size()) : 0);
        handle_tile(index, tiles[i], share, event.at);
        if (!workers_[size_t(index)].ready || workers_[size_t(index)].dropping) return;
      }
      return;
    }
    case wire::Envelope::kError:
      if (m.error().code() == wire::ErrorMessage::BAD_REQUEST && m.error().frame_id() != 0)
        return refuse_frame(index, m.error().frame_id(), m.error().message());
      return drop(index, "error from the worker: " + m.error().message());
    default: return;
  }
}

// A worker that refuses a frame's parameters is well: any worker would refuse them, so the frame is
// skipped, and in a live session the settings that made it go back to the ones before.
void RenderSession::refuse_frame(int worker, uint64_t frame_id, const std::string& why) {
  if (open_.find(frame_id) == open_.end()) return;  // another worker refused it first
  abandon_frame(frame_id, workers_[size_t(worker)].name + " refused it: " + why);
  if (!observer_ || !previous_options_) return;
  apply_options(std::move(*previous_options_));
  previous_options_.reset();
  scheduler_.set_policy(options_.policy);
  observer_->settings_rejected(why);
}

void RenderSession::handle_tile(int worker, wire::TileResult& tile, uint64_t wire_bytes, Clock::time_point received) {
  auto& w = workers_[size_t(worker)];
  w.last_progress = Clock::now();
  const auto it = open_.find(tile.frame_id());
  if (it == open_.end()) {
    ++late_tiles_;  // a frame already finished or skipped
    return;
  }
  OpenFrame& frame = it->second;
  if (frame.assembler->has(tile.tile_id())) {
    // A tile still being composited from a worker lost meanwhile comes back from the worker it
    // went to next: not a duplicate the workers sent, the first copy counts.
    const bool reassigned_copy = !frame.assembler->composited(tile.tile_id()) &&
                                 frame.assembler->owners()[tile.tile_id()] != worker;
    // A tile copied at the frame's tail: the later of its two copies is expected, and discarded.
    const uint32_t n = frame.assembler->grid().tiles_per_eye();
    const bool reissued_copy = scheduler_.was_reissued(tile.frame_id(), tile_pairs_ ? tile.tile_id() % n : tile.tile_id());
    if (!reassigned_copy && !reissued_copy) frame.record.duplicates++;
    return;
  }
  try {
    frame.assembler->claim(tile, worker);
  } catch (const std::exception& e) {
    return drop(worker, std::string("sent a bad tile: ") + e.what());
  }
  auto& per_worker = frame.record.workers[size_t(worker)];
  per_worker.busy_ms += tile.render_us() / 1000.0;
  per_worker.cpu_ms += tile.render_cpu_us() / 1000.0;
  per_worker.wire_bytes += wire_bytes;
  frame.record.wire_bytes += wire_bytes;
  const uint64_t pixel_bytes = uint64_t(tile.width()) * tile.height() * 4;
  frame.record.pixel_bytes += pixel_bytes;
  frame.pixel_samples += double(tile.samples_per_pixel()) * tile.width() * tile.height();
  const uint32_t n = frame.assembler->grid().tiles_per_eye();
  const uint32_t unit = tile_pairs_ ? tile.tile_id() % n : tile.tile_id();
  if (tile.batch_tiles() > 0) {  // a pathtrace pair's times are on its left eye's result
    scheduler_.record_cost(worker, unit, tile.render_us() / 1000.0);
    StageTimes t;
    t.queue = tile.queue_us() / 1000.0;
    t.device = tile.device_us() / 1000.0;
    t.readback = tile.readback_us() / 1000.0;
    t.encode = tile.encode_us() / 1000.0;
    t.wire = std::max(0.0, ms_between(frame.sent[unit], received) - tile.worker_us() / 1000.0);
    frame.tile_sums.add(t);
    per_worker.stages.add(t);
    frame.timed_tiles++;
    frame.batches[size_t(worker)] += 1.0 / tile.batch_tiles();
    // What the link and the codec cost, for --compression auto and --inflight auto. A tile copied
    // at the frame's tail went out twice: which copy this is, and so its wire time, is not known.
    const bool timed = !scheduler_.was_reissued(tile.frame_id(), unit);
    if (timed && t.wire > 0) {
      const double bytes_per_ms = double(wire_bytes) / t.wire;
      w.link_bytes_per_ms = w.link_bytes_per_ms > 0 ? 0.8 * w.link_bytes_per_ms + 0.2 * bytes_per_ms : bytes_per_ms;
    }
    if (tile.encoding() == wire::ZSTD_RGBA8 && pixel_bytes > 0) {
      const double ratio = double(tile.data().size()) / double(pixel_bytes);
      w.zstd_ratio = w.zstd_ratio > 0 ? 0.8 * w.zstd_ratio + 0.2 * ratio : ratio;
      const double per_mb = t.encode / (double(pixel_bytes) / 1e6);
      w.codec_ms_per_mb = w.codec_ms_per_mb > 0 ? 0.8 * w.codec_ms_per_mb + 0.2 * per_mb : per_mb;
    }
    // A tile's trip besides rendering (encode, both directions on the wire), in tiles' render times.
    const double per_tile_ms = std::max(0.05, tile.render_us() / 1000.0);
    const double trip = t.wire + t.encode;
    if (timed) {
      w.rtt_tiles = w.rtt_tiles > 0 ? 0.8 * w.rtt_tiles + 0.2 * (trip / per_tile_ms) : trip / per_tile_ms;
      round_trip_ms_ = round_trip_ms_ > 0 ? 0.9 * round_trip_ms_ + 0.1 * trip : trip;
      scheduler_.set_round_trip_ms(round_trip_ms_);
    }
  }
  // Decoded and composited on the pool; the tile counts once that is done (handle_composited).
  auto assembler = frame.assembler;
  auto result = std::make_shared<wire::TileResult>();
  result->Swap(&tile);
  Cluster* cluster = &cluster_;
  const uint64_t frame_id = result->frame_id();
  cluster_.tile_pool().post([assembler, result, cluster, worker, frame_id] {
    LinkEvent done;
    done.kind = LinkEvent::Kind::composited;
    done.worker = worker;
    done.frame_id = frame_id;
    done.tile_id = result->tile_id();
    try {
      const CompositeTiming timing = assembler->composite(*result);
      done.decode_ms = timing.decode_ms;
      done.composite_ms = timing.composite_ms;
    } catch (const std::exception& e) {
      done.reason = e.what();
    }
    cluster->post(std::move(done));
  });
}

void RenderSession::handle_composited(const LinkEvent& event) {
  const int worker = event.worker;
  const auto it = open_.find(event.frame_id);
  if (it == open_.end()) return;  // finished or skipped meanwhile
  OpenFrame& frame = it->second;
  if (!event.reason.empty()) {
    frame.assembler->release(event.tile_id);  // the worker's outstanding tiles, this one too, go to others
    return drop(worker, "sent a bad tile: " + event.reason);
  }
  frame.assembler->mark_composited(event.tile_id);
  frame.composited_tiles++;
  frame.tile_sums.decode += event.decode_ms;
  frame.tile_sums.composite += event.composite_ms;
  auto& per_worker = frame.record.workers[size_t(worker)];
  per_worker.stages.decode += event.decode_ms;
  per_worker.stages.composite += event.composite_ms;
  // A pathtrace stereo pair is done when both of its eye tiles are in.
  uint32_t unit = event.tile_id;
  if (tile_pairs_) {
    const uint32_t n = frame.assembler->grid().tiles_per_eye();
    unit = event.tile_id % n;
    if (!frame.assembler->composited(unit) || !frame.assembler->composited(unit + n)) return;
  }
  scheduler_.tile_done(worker, event.frame_id, unit);
  per_worker.tiles++;
  if (frame.assembler->complete()) finish_frame(event.frame_id);
}

void RenderSession::choose_encoding(int worker) {
  WorkerView& w = workers_[size_t(worker)];
  if (!options_.compression_auto) {
    w.encoding = options_.encoding;
    return;
  }
  // Raw where the link is faster than compressing: always on loopback; elsewhere once the
  // measured link moves a tile's saved bytes quicker than zstd encodes and decodes them.
  if (w.loopback) {
    w.encoding = wire::RAW_RGBA8;
    return;
  }
  if (w.link_bytes_per_ms <= 0 || w.zstd_ratio <= 0) {
    w.encoding = wire::ZSTD_RGBA8;
    return;
  }
  const double saved_ms_per_mb = (1.0 - w.zstd_ratio) * 1e6 / w.link_bytes_per_ms;
  const double codec_ms_per_mb = w.codec_ms_per_mb * 2.0;  // decoding costs about what encoding does
  if (w.encoding == wire::ZSTD_RGBA8 && saved_ms_per_mb * 1.2 < codec_ms_per_mb) w.encoding = wire::RAW_RGBA8;
  else if (w.encoding == wire::RAW_RGBA8 && saved_ms_per_mb > codec_ms_per_mb * 1.2) w.encoding = wire::ZSTD_RGBA8;
}

void RenderSession::tune_inflight() {
  if (!options_.inflight_auto || options_.policy.schedule != Schedule::dynamic) return;
  // Enough tiles in flight that a worker renders on while finished ones travel.
  double most = 0;
  for (const auto& w : workers_)
    if (w.ready) most = std::max(most, w.rtt_tiles);
  scheduler_.set_inflight(std::clamp(unsigned(std::ceil(most)) + 2u, 2u, 32u));
}

void RenderSession::finish_frame(uint64_t frame_id) {
  previous_options_.reset();  // the workers took the settings in force
  auto it = open_.find(frame_id);
  OpenFrame& frame = it->second;
  const auto now = Clock::now();
  FrameRecord record = frame.record;
  record.complete = true;
  record.tiles_received = units_received(*frame.assembler);
  const auto& grid = frame.assembler->grid();
  record.samples_per_pixel = frame.pixel_samples / (double(grid.width()) * grid.height() * grid.eyes());
  record.assignments = scheduler_.assignments(frame_id);
  record.reassigned = scheduler_.reassigned(frame_id);
  record.reissued = scheduler_.reissued(frame_id);
  record.frame_ms = ms_between(frame.opened, now);
  record.latency_ms = ms_between(frame.pose.acquired, now);
  record.completed_s = ms_between(started_, now) / 1000.0;
  if (frame.timed_tiles) {
    StageTimes means = frame.tile_sums;
    means.decode = means.composite = 0;
    means.pose_wait = means.request_out = means.output = 0;
    record.stages.add(means, 1.0 / frame.timed_tiles);
  }
  if (frame.composited_tiles) {
    record.stages.decode = frame.tile_sums.decode / frame.composited_tiles;
    record.stages.composite = frame.tile_sums.composite / frame.composited_tiles;
  }
  for (size_t i = 0; i < record.workers.size(); ++i) {
    auto& pw = record.workers[i];
    if (!pw.tiles) continue;
    StageTimes sums = pw.stages;
    pw.stages = StageTimes{};
    pw.stages.add(sums, 1.0 / pw.tiles);
    pw.batches = uint32_t(std::lround(frame.batches[i]));
  }
  scheduler_.close_frame(frame_id);
  for (size_t i = 0; i < record.workers.size(); ++i)
    if (record.workers[i].tiles && record.workers[i].busy_ms > 0)
      scheduler_.record_speed(int(i), record.workers[i].tiles / (record.workers[i].busy_ms / 1000.0));
  if (observer_)
    observer_->frame_completed({frame.pose, frame.assembler->image(), frame.assembler->grid(), frame.assembler->owners(), record,
                                options_, frame.request, frame.opened, now, frame.tile_sums.decode + frame.tile_sums.composite, frame.eyes,
                                frame.assembler->depth()});
  const auto output_start = Clock::now();
  if (writer_)
    writer_->push({frame.index, frame.assembler->take_image(), frame.assembler->grid(), frame.assembler->owners()});
  record.stages.output = ms_between(output_start, Clock::now());
  records_.push_back(record);
  open_.erase(it);
  // Live poses with frames pipelined: an older frame still open would be shown after this newer
  // one, so no one would see it. Its tiles are cancelled on the workers.
  if (poses_.live()) {
    std::vector<uint64_t> older;
    for (const auto& [id, open] : open_)
      if (id < frame_id) older.push_back(id);
    for (uint64_t id : older) abandon_frame(id, "superseded by a newer frame", true);
  }
  for (size_t i = 0; i < workers_.size(); ++i) choose_encoding(int(i));
  tune_inflight();
}

void RenderSession::abandon_frame(uint64_t frame_id, const std::string& why, bool superseded) {
  auto it = open_.find(frame_id);
  OpenFrame& frame = it->second;
  FrameRecord record = frame.record;
  record.complete = false;
  record.superseded = superseded;
  record.tiles_received = units_received(*frame.assembler);
  record.assignments = scheduler_.assignments(frame_id);
  record.reassigned = scheduler_.reassigned(frame_id);
  record.reissued = scheduler_.reissued(frame_id);
  record.frame_ms = ms_between(frame.opened, Clock::now());
  record.note = why;
  const std::string text = "frame " + std::to_string(frame.index) + " skipped, not written: " + why + " (" +
                           std::to_string(record.tiles_received) + " of " + std::to_string(record.tiles) + " tiles arrived)";
  if (superseded)
    net::log_info(text);
  else
    net::log_warning(text);
  scheduler_.close_frame(frame_id);
  records_.push_back(record);
  open_.erase(it);
}

uint32_t RenderSession::units_received(const FrameAssembler& assembler) const {
  if (!tile_pairs_) return assembler.received();
  const uint32_t n = assembler.grid().tiles_per_eye();
  uint32_t pairs = 0;
  for (uint32_t t = 0; t < n; ++t) pairs += assembler.has(t) && assembler.has(t + n);
  return pairs;
}

void RenderSession::check_deadlines() {
  const auto now = Clock::now();
  for (size_t i = 0; i < workers_.size(); ++i) {
    const auto& w = workers_[i];
    if (w.ready && !w.dropping && scheduler_.outstanding(int(i)) > 0 && now - w.last_progress > options_.stall_timeout)
      drop(int(i), "stalled: holds tiles but finished none for " + seconds_text(options_.stall_timeout));
  }
  std::vector<uint64_t> late;
  for (const auto& [id, frame] : open_)
    if (now - frame.opened > options_.frame_timeout) late.push_back(id);
  for (uint64_t id : late) abandon_frame(id, "not complete after " + seconds_text(options_.frame_timeout));

  const bool work_left = !open_.empty() || (!stop_requested_ && !poses_ended_ && (options_.frames == 0 || frames_opened_ < options_.frames));
  if (scheduler_.ready_workers() > 0 || !work_left) {
    no_worker_since_.reset();
    return;
  }
  if (!no_worker_since_) {
    no_worker_since_ = now;
    net::log_warning("no worker left; waiting " + seconds_text(options_.no_worker_timeout) + " for one to rejoin");
    return;
  }
  if (now - *no_worker_since_ > options_.no_worker_timeout) {
    std::vector<uint64_t> open;
    for (const auto& [id, frame] : open_) open.push_back(id);
    for (uint64_t id : open) abandon_frame(id, "no worker left");
    throw Error("no worker left (" + failures() + ")");
  }
}

void RenderSession::update_status() {
  if (!status_) return;
  size_t ready = 0;
  for (const auto& w : workers_) ready += w.ready;
  const RunSummary s = summary();
  char text[320];
  int used = std::snprintf(text, sizeof text, "%zu done | %.1f ms/frame | %.2f fps | %zu/%zu workers | %.0f KB/frame%s", s.frames_complete,
                           s.mean_frame_ms, s.frames_per_second, ready, workers_.size(), s.mean_wire_bytes / 1024.0,
                           s.frames_failed ? (" | " + std::to_string(s.frames_failed) + " skipped").c_str() : "");
  // The last whole frame, stage by stage (tile stages are means over its tiles).
  const auto last = std::find_if(records_.rbegin(), records_.rend(), [](const FrameRecord& r) { return r.complete; });
  if (last != records_.rend() && used > 0 && size_t(used) < sizeof text) {
    const StageTimes& t = last->stages;
    std::snprintf(text + used, sizeof text - size_t(used),
                  " | ms: pose %.1f req %.1f queue %.1f dev %.1f read %.1f enc %.1f wire %.1f dec %.1f comp %.1f out %.1f",
                  t.pose_wait, t.request_out, t.queue, t.device, t.readback, t.encode, t.wire, t.decode, t.composite, t.output);
  }
  const double fraction = options_.frames ? double(records_.size()) / double(options_.frames) : 0.0;
  status_->update(fraction, text);
}

RunSummary RenderSession::summary() const {
  RunSummary base;
  for (const auto& w : workers_) {
    base.worker_names.push_back(w.name);
    base.worker_devices.push_back(w.device);
    base.worker_scene_memory.push_back(w.scene_memory);
  }
  base.mode = options_.mode;
  base.stereo = options_.stereo;
  base.schedule = options_.policy.schedule == Schedule::static_split ? "static" : "dynamic";
  base.scene = scene_.name;
  base.poses = poses_.describe();
  base.width = options_.width;
  base.height = options_.height;
  base.tile_size = options_.tile_size;
  base.wall_seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  return summarize(records_, base);
}

void RenderSession::write_stats_file() const {
  try {
    write_stats(*options_.stats_path, summary(), records_);
  } catch (const std::exception& e) {
    net::log_warning(std::string("cannot write the statistics: ") + e.what());
  }
}

}  // namespace tessera::master
