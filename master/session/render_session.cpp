#include "master/session/render_session.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/base/error.h"
#include "common/net/log.h"
#include "common/net/protocol.h"
#include "common/render/stereo.h"
#include "master/session/live_view.h"
#include "master/session/scene_clock.h"

namespace tessera::master {
namespace {

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
    if (observer_) observer_->finish_records(records_.records());
    if (options_.stats_path) write_stats_file();
    throw;
  }
  poses_.set_wake({});
  if (superseded_) net::log_info(std::to_string(superseded_) + " frames cancelled for newer poses or settings");
  if (observer_) observer_->finish_records(records_.records());
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
  if (observer_) observer_->update_frame_options(options_, *pose);
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
  set_scene_motion(r, frame.pose);
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
  // An older worker would render the packed pose: a frame of a scene that moves goes only to workers
  // that place its instances (while any does).
  const bool motion = (scene_.animated && request.scene_time_s() != 0) || request.instance_transforms_size() > 0;
  const bool any_motion = std::any_of(workers_.begin(), workers_.end(), [](const WorkerView& w) { return w.scene_motion; });
  for (size_t i = 0; i < workers_.size(); ++i) {
    WorkerView& w = workers_[i];
    const char* missing = views && !w.eye_views                  ? net::kEyeViewsFeature
                          : jitter && !w.aa_sample               ? net::kAaSampleFeature
                          : alpha && any_aux && !w.aux_outputs   ? net::kAuxOutputsFeature
                          : sun && any_sun && !w.sun_override    ? net::kSunOverrideFeature
                          : motion && any_motion && !w.scene_motion ? net::kSceneMotionFeature
                                                                 : nullptr;
    if (!missing) continue;
    lacking.insert(int(i));
    if (w.ready && !w.told_missing.count(missing)) {
      w.told_missing.insert(missing);
      net::log_warning(w.name + " does not list the " + missing + " feature: it is given no live frames that need it");
    }
  }
  if (motion && !any_motion && !told_no_motion_) {
    told_no_motion_ = true;
    net::log_warning(std::string("no worker lists the ") + net::kSceneMotionFeature +
                     " feature: live frames show the scene as packed (nothing moves)");
  }
  if (((alpha && !any_aux) || (sun && !any_sun)) && !told_aux_unsupported_) {
    told_aux_unsupported_ = true;
    net::log_warning(std::string("no worker lists the ") + (alpha && !any_aux ? net::kAuxOutputsFeature : net::kSunOverrideFeature) +
                     " feature: live frames are rendered without it (opaque, the scene's own sun)");
  }
  return lacking;
}

// Every tile of the frame at one instant of the scene's clock, with the instances the pages moved.
// Offline the clock runs with the poses' own time from the first pose on (a headset's or a file's
// clock may start anywhere); there a scene without animations gets no time (every time renders the
// same). A live clock's time always goes out: the pages see it in each frame's header.
void RenderSession::set_scene_motion(wire::FrameRequest& r, const PoseSample& pose) {
  if (!first_pose_time_) first_pose_time_ = pose.time;
  double time = options_.scene_time ? *options_.scene_time
                                    : options_.scene_time_start + options_.time_scale * (pose.time - *first_pose_time_);
  if (!std::isfinite(time)) time = options_.scene_time_start;
  if (std::fabs(time) > SceneClock::kMaxTime) time = std::fmod(time, SceneClock::kMaxTime);  // animations loop
  if ((scene_.animated || options_.scene_time) && time != 0) r.set_scene_time_s(time);
  for (const auto& placed : options_.instance_transforms) {
    auto& t = *r.add_instance_transforms();
    t.set_instance(placed.instance);
    for (float v : placed.world.m) t.add_matrix(v);
  }
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
    if (!options_.wait_for_workers) throw Error("no worker left (" + failures() + ")");
    net::log_warning("no worker for " + seconds_text(options_.no_worker_timeout) + " (" + failures() +
                     "); the session goes on and renders again when a worker is back");
    no_worker_since_ = now;
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
  const auto& records = records_.records();
  const auto last = std::find_if(records.rbegin(), records.rend(), [](const FrameRecord& r) { return r.complete; });
  if (last != records.rend() && used > 0 && size_t(used) < sizeof text) {
    const StageTimes& t = last->stages;
    std::snprintf(text + used, sizeof text - size_t(used),
                  " | ms: pose %.1f req %.1f queue %.1f dev %.1f read %.1f enc %.1f wire %.1f dec %.1f comp %.1f out %.1f",
                  t.pose_wait, t.request_out, t.queue, t.device, t.readback, t.encode, t.wire, t.decode, t.composite, t.output);
  }
  const double fraction = options_.frames ? double(records.size()) / double(options_.frames) : 0.0;
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
  return records_.summary(base);
}

void RenderSession::write_stats_file() const {
  try {
    write_stats(*options_.stats_path, summary(), records_.records());
  } catch (const std::exception& e) {
    net::log_warning(std::string("cannot write the statistics: ") + e.what());
  }
}

}  // namespace tessera::master
