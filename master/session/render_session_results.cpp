// RenderSession's side of what comes back: link events (workers ready, lost, refusing), tiles
// composited into their frames, each worker's tile encoding and the in-flight depth tuned from its
// measurements, and frames finished (written, recorded) or abandoned.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/base/version.h"
#include "common/net/log.h"
#include "common/net/protocol.h"
#include "master/cluster/worker_version.h"
#include "master/session/render_session.h"

namespace tessera::master {

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
        w.scene_motion = std::find(features.begin(), features.end(), net::kSceneMotionFeature) != features.end();
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
  records_.add(std::move(record), poses_.live());
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
  records_.add(std::move(record), poses_.live());
  open_.erase(it);
}

uint32_t RenderSession::units_received(const FrameAssembler& assembler) const {
  if (!tile_pairs_) return assembler.received();
  const uint32_t n = assembler.grid().tiles_per_eye();
  uint32_t pairs = 0;
  for (uint32_t t = 0; t < n; ++t) pairs += assembler.has(t) && assembler.has(t + n);
  return pairs;
}
}  // namespace tessera::master
