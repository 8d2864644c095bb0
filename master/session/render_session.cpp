#include "master/session/render_session.h"
#include "master/session/live_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/base/error.h"
#include "common/base/hash.h"
#include "common/net/log.h"
#include "common/render/stereo.h"

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
                                options->stereo != options_.stereo;
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
  std::vector<uint64_t> stale;
  for (const auto& [id, frame] : open_)
    if (frame.pose.refinement > 0) stale.push_back(id);
  for (uint64_t id : stale) {
    scheduler_.close_frame(id);  // the workers holding its tiles drop them
    open_.erase(id);
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
      if (auto event = cluster_.next_event(next_check)) handle(*event);
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
  if (superseded_) net::log_info(std::to_string(superseded_) + " refinement frames cancelled for newer poses");
  if (observer_) observer_->finish_records(records_);
  if (options_.stats_path) write_stats_file();
  return summary();
}

void RenderSession::wait_for_workers() {
  const auto deadline = Clock::now() + options_.startup_timeout;
  std::vector<bool> settled(workers_.size(), false);
  while (Clock::now() < deadline && std::count(settled.begin(), settled.end(), false) > 0) {
    auto event = cluster_.next_event(deadline);
    if (!event) break;
    const int w = event->worker;
    if (event->kind == LinkEvent::Kind::ready || event->kind == LinkEvent::Kind::failed) settled[size_t(w)] = true;
    handle(*event);
    if (stop_requested_) throw Error("interrupted while connecting to the workers");
  }
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
  const bool stereo = options_.stereo;
  const net::TileGrid grid(options_.width, options_.height, options_.tile_size, stereo ? 2 : 1);
  // Scheduling units: tiles, or (pathtrace stereo) tile pairs named by their left eye's id.
  const uint32_t units = tile_pairs_ ? grid.tiles_per_eye() : grid.tile_count();
  frame.assembler = std::make_unique<FrameAssembler>(grid);

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
  r.mutable_projection()->set_vertical_fov_degrees(options_.fov ? *options_.fov : scene_.manifest.camera().vertical_fov_degrees());
  if (const auto gaze = pose->gaze ? pose->gaze : options_.gaze) {
    r.mutable_gaze()->set_x((*gaze)[0]);
    r.mutable_gaze()->set_y((*gaze)[1]);
  }
  r.mutable_image()->set_width(options_.width);
  r.mutable_image()->set_height(options_.height);
  r.mutable_image()->set_tile_size(options_.tile_size);
  r.set_reply(options_.policy.schedule == Schedule::static_split ? wire::BATCH : wire::EACH_TILE);
  r.set_encoding(options_.encoding);
  r.set_zstd_level(options_.zstd_level);
  set_live_view(r, *pose);
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
  frame.record.workers.resize(workers_.size());
  scheduler_.open_frame(id, units);
  return true;
}

void RenderSession::request_tiles(int worker, uint64_t frame_id, const std::vector<uint32_t>& tiles) {
  const auto it = open_.find(frame_id);
  if (it == open_.end()) return;
  wire::Envelope m;
  *m.mutable_frame_request() = it->second.request;
  for (uint32_t t : tiles) m.mutable_frame_request()->add_tiles(t);
  if (scheduler_.outstanding(worker) == tiles.size()) workers_[size_t(worker)].last_progress = Clock::now();
  cluster_.send(worker, m);
}

void RenderSession::assign_tiles(int worker, uint64_t frame_id, const std::vector<uint32_t>& tiles) {
  wire::Envelope m;
  m.mutable_tile_assign()->set_frame_id(frame_id);
  for (uint32_t t : tiles) m.mutable_tile_assign()->add_tiles(t);
  if (scheduler_.outstanding(worker) == tiles.size()) workers_[size_t(worker)].last_progress = Clock::now();
  cluster_.send(worker, m);
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
      w.last_progress = Clock::now();
      if (!event.info.name().empty()) w.name = cluster_.address(index).text() + " (" + event.info.name() + ")";
      char load[64];
      std::snprintf(load, sizeof load, "%.0f ms", event.scene.load_ms());
      net::log_info(std::string(rejoin ? "rejoined: " : "ready: ") + w.name + " on " + w.device + ", scene " +
                    (event.pushed ? "pushed and loaded in " : "loaded in ") + load);
      scheduler_.add_worker(index);
      if (observer_)
        observer_->worker_changed({rejoin ? WorkerChange::Kind::rejoined : WorkerChange::Kind::ready, index, w.name, w.device, {}});
      return;
    }
    case LinkEvent::Kind::failed:
      if (w.last_failure != event.reason) {
        net::log_warning(w.name + ": " + event.reason);
        if (observer_) observer_->worker_changed({WorkerChange::Kind::failed, index, w.name, w.device, event.reason});
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
      if (observer_) observer_->worker_changed({WorkerChange::Kind::lost, index, w.name, w.device, event.reason});
      return;
    }
    case LinkEvent::Kind::message: break;
  }
  if (!w.ready) return;
  const wire::Envelope& m = event.message;
  switch (m.body_case()) {
    case wire::Envelope::kHeartbeat:
      if (m.heartbeat().tiles_rendered() != w.tiles_rendered) {
        w.tiles_rendered = m.heartbeat().tiles_rendered();
        w.last_progress = Clock::now();
      }
      return;
    case wire::Envelope::kTileResult: return handle_tile(index, m.tile_result(), event.wire_bytes);
    case wire::Envelope::kTileBatch: {
      const auto& tiles = m.tile_batch().tiles();
      for (int i = 0; i < tiles.size(); ++i) {
        // The batch's wire bytes are spread over its tiles, so per-frame totals stay exact.
        const uint64_t share = event.wire_bytes / uint64_t(tiles.size()) + (i == 0 ? event.wire_bytes % uint64_t(tiles.size()) : 0);
        handle_tile(index, tiles[i], share);
        if (!workers_[size_t(index)].ready || workers_[size_t(index)].dropping) return;
      }
      return;
    }
    case wire::Envelope::kError:
      return drop(index, "error from the worker: " + m.error().message());
    default: return;
  }
}

void RenderSession::handle_tile(int worker, const wire::TileResult& tile, uint64_t wire_bytes) {
  auto& w = workers_[size_t(worker)];
  w.last_progress = Clock::now();
  const auto it = open_.find(tile.frame_id());
  if (it == open_.end()) {
    ++late_tiles_;  // a frame already finished or skipped
    return;
  }
  OpenFrame& frame = it->second;
  if (frame.assembler->has(tile.tile_id())) {
    frame.record.duplicates++;
    return;
  }
  const auto composite_start = Clock::now();
  try {
    frame.assembler->add(tile, worker);
  } catch (const std::exception& e) {
    return drop(worker, std::string("sent a bad tile: ") + e.what());
  }
  frame.composite_ms += ms_between(composite_start, Clock::now());
  auto& per_worker = frame.record.workers[size_t(worker)];
  per_worker.busy_ms += tile.render_us() / 1000.0;
  per_worker.cpu_ms += tile.render_cpu_us() / 1000.0;
  per_worker.wire_bytes += wire_bytes;
  frame.record.wire_bytes += wire_bytes;
  frame.record.pixel_bytes += uint64_t(tile.width()) * tile.height() * 4;
  frame.pixel_samples += double(tile.samples_per_pixel()) * tile.width() * tile.height();
  // A pathtrace stereo pair is done when both of its eye tiles are in.
  uint32_t unit = tile.tile_id();
  if (tile_pairs_) {
    const uint32_t n = frame.assembler->grid().tiles_per_eye();
    unit = tile.tile_id() % n;
    if (!frame.assembler->has(unit) || !frame.assembler->has(unit + n)) return;
  }
  scheduler_.tile_done(worker, tile.frame_id(), unit);
  per_worker.tiles++;
  if (frame.assembler->complete()) finish_frame(tile.frame_id());
}

void RenderSession::finish_frame(uint64_t frame_id) {
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
  record.frame_ms = ms_between(frame.opened, now);
  record.latency_ms = ms_between(frame.pose.acquired, now);
  record.completed_s = ms_between(started_, now) / 1000.0;
  scheduler_.close_frame(frame_id);
  for (size_t i = 0; i < record.workers.size(); ++i)
    if (record.workers[i].tiles && record.workers[i].busy_ms > 0)
      scheduler_.record_speed(int(i), record.workers[i].tiles / (record.workers[i].busy_ms / 1000.0));
  if (observer_)
    observer_->frame_completed({frame.pose, frame.assembler->image(), frame.assembler->grid(), frame.assembler->owners(), record,
                                options_, frame.opened, now, frame.composite_ms});
  if (writer_)
    writer_->push({frame.index, frame.assembler->take_image(), frame.assembler->grid(), frame.assembler->owners()});
  records_.push_back(record);
  open_.erase(it);
}

void RenderSession::abandon_frame(uint64_t frame_id, const std::string& why) {
  auto it = open_.find(frame_id);
  OpenFrame& frame = it->second;
  FrameRecord record = frame.record;
  record.complete = false;
  record.tiles_received = units_received(*frame.assembler);
  record.assignments = scheduler_.assignments(frame_id);
  record.reassigned = scheduler_.reassigned(frame_id);
  record.frame_ms = ms_between(frame.opened, Clock::now());
  record.note = why;
  net::log_warning("frame " + std::to_string(frame.index) + " skipped, not written: " + why + " (" +
                   std::to_string(record.tiles_received) + " of " + std::to_string(record.tiles) + " tiles arrived)");
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
  char text[160];
  std::snprintf(text, sizeof text, "%zu done | %.1f ms/frame | %.2f fps | %zu/%zu workers | %.0f KB/frame%s", s.frames_complete,
                s.mean_frame_ms, s.frames_per_second, ready, workers_.size(), s.mean_wire_bytes / 1024.0,
                s.frames_failed ? (" | " + std::to_string(s.frames_failed) + " skipped").c_str() : "");
  const double fraction = options_.frames ? double(records_.size()) / double(options_.frames) : 0.0;
  status_->update(fraction, text);
}

RunSummary RenderSession::summary() const {
  RunSummary base;
  for (const auto& w : workers_) {
    base.worker_names.push_back(w.name);
    base.worker_devices.push_back(w.device);
  }
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
