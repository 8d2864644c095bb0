// WorkerSession on the render thread: queued tiles taken as batches (one launch where the device
// batches), rendered in the frame's mode, and handed to the encoders, which send them back one by
// one or as parts of the frame's batch.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <thread>

#include "common/net/message_limits.h"
#include "common/net/tile_codec.h"
#include "worker/daemon/frame_setup.h"
#include "worker/daemon/mode_renderers.h"
#include "worker/daemon/worker_session.h"
#include "worker/daemon/worker_session_parts.h"

namespace tessera::worker {

namespace {

constexpr uint64_t kMaxBatchPixels = uint64_t(1) << 22;  // raytrace tiles of one launch (16 MiB of RGBA8)
// pathtrace tile pairs of one batch, pixels per eye: a launch's buffers hold ~100 bytes a pixel of
// both eyes (192 MiB for a 1024x1024 stereo frame).
constexpr uint64_t kMaxPathtraceBatchPixels = uint64_t(1) << 20;
// vct tiles of one launch: 64 MiB of surface records between its two kernels (a 1024x1024 eye at once).
constexpr uint64_t kMaxVctBatchPixels = uint64_t(1) << 20;
constexpr uint64_t kMaxUnitsEncoding = 1024;             // rendered tiles waiting for an encoder, per connection

// CPU time of the calling thread: render time that other load on the machine does not inflate.
uint64_t thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return uint64_t(t.tv_sec) * 1000000u + uint64_t(t.tv_nsec) / 1000u;
}

}  // namespace

bool WorkerSession::has_work() const {
  std::lock_guard lock(mutex_);
  return queued_tiles_ > 0;
}

bool WorkerSession::take_batch(Batch& batch) {
  while (!pending_.empty() && pending_.front().frame->canceled) pending_.pop_front();
  if (pending_.empty()) return false;
  batch.frame = pending_.front().frame;
  const Frame& frame = *batch.frame;
  // All modes render their queued tiles (pathtrace: tile pairs; up to a bound) in one launch where
  // the device launches batches. Backends that render tile by tile anyway go a tile (pair) at a
  // time, so that each tile leaves as soon as it is done: in the dynamic schedule its replacement
  // then travels while the worker renders the next queued tile, instead of the worker idling for a
  // round trip after every batch. (The path tracer is made by the first pathtrace tile rendered:
  // that one goes alone.)
  const bool batches = frame.mode == Frame::Mode::pathtrace
                           ? frame.scene->pathtrace && frame.scene->pathtrace->launches_batches()
                           : frame.scene->renderer->launches_batches();
  const uint64_t max_pixels = !batches                              ? 1
                              : frame.mode == Frame::Mode::raytrace ? kMaxBatchPixels
                              : frame.mode == Frame::Mode::vct      ? kMaxVctBatchPixels
                                                                    : kMaxPathtraceBatchPixels;
  uint64_t pixels = 0;
  while (!pending_.empty() && pending_.front().frame == batch.frame) {
    Work& work = pending_.front();
    size_t taken = 0;
    for (; taken < work.tiles.size(); ++taken) {
      const net::TileSpec spec = frame.grid.tile(work.tiles[taken]);
      const uint64_t tile_pixels = uint64_t(spec.width) * spec.height;
      if (!batch.tiles.empty() && pixels + tile_pixels > max_pixels) break;
      pixels += tile_pixels;
      batch.tiles.emplace_back(work.tiles[taken], work.received);
    }
    work.tiles.erase(work.tiles.begin(), work.tiles.begin() + ptrdiff_t(taken));
    if (!work.tiles.empty()) break;
    pending_.pop_front();
  }
  return true;
}

RenderWork::Step WorkerSession::run_step() {
  Batch batch;
  {
    std::lock_guard lock(mutex_);
    if (pending_.empty()) return Step::idle;
    if (!connection_->is_open()) {
      pending_.clear();
      return Step::idle;
    }
    // This master does not read fast enough: its work waits, the other masters' does not.
    if (connection_->queued_bytes() > context_.config.send_backlog_bytes || units_encoding_ >= kMaxUnitsEncoding)
      return Step::blocked;
    if (!take_batch(batch)) return Step::idle;
  }
  render_batch(batch);
  return Step::ran;
}

// Every tile of a frame shows its instant: the scene's instances are posed before each of its batches
// (a no-op after the first; the render thread is the only one that poses them), and the renderer
// takes the rebuilt top level. Anything that moved restarts the path-traced accumulation of every
// tile: its samples so far estimate another image (the whole scene's, not only what is in view).
void WorkerSession::pose_scene_for(Frame& frame) {
  LoadedScene& scene = *frame.scene;
  if (!scene.motion || !pose_scene(*scene.motion, frame.motion)) return;
  scene.renderer->place_instances(scene.motion->top_level());
  if (scene.pathtrace) scene.pathtrace->place_instances(scene.motion->top_level());  // drops the accumulations too
}

void WorkerSession::render_batch(Batch& batch) {
  const std::shared_ptr<Frame>& frame = batch.frame;
  pose_scene_for(*frame);
  const auto start = Clock::now();
  const uint64_t cpu_start = thread_cpu_us();
  const StopRequested stop = [this, frame] {
    return frame->canceled || !connection_->is_open() || context_.render.stopping();
  };
  std::vector<Unit> units(batch.tiles.size());
  BatchTiming timing;
  uint64_t total_pixels = 0;
  auto self = shared_from_this();
  // A unit's part of the batch's times: its pixels' share, so that per-tile sums stay the batch's.
  const auto part_of = [&](size_t i) {
    const auto& spec = units[i].outputs[0].spec;
    return total_pixels ? double(uint64_t(spec.width) * spec.height) / double(total_pixels) : 1.0;
  };
  // Unit i goes to an encoder, with its part of the times.
  const auto encode_unit = [&](size_t i, double render_us, double cpu_us, double device_us, double readback_us) {
    const auto clamped = [](double us) { return uint32_t(std::clamp(us, 0.0, double(UINT32_MAX))); };
    wire::TileResult& t = units[i].timing;
    t.set_render_us(clamped(render_us));
    t.set_render_cpu_us(clamped(cpu_us));
    t.set_device_us(clamped(device_us));
    t.set_readback_us(clamped(readback_us));
    t.set_queue_us(uint32_t(std::clamp<int64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(start - batch.tiles[i].second).count(), 0, UINT32_MAX)));
    t.set_batch_tiles(uint32_t(batch.tiles.size()));
    {
      std::lock_guard lock(mutex_);
      ++units_encoding_;
    }
    auto unit = std::make_shared<Unit>(std::move(units[i]));
    const auto received = batch.tiles[i].second;
    if (context_.encoders)
      context_.encoders->post([self, frame, unit, received] { self->encode_and_send(frame, *unit, received); });
    else
      encode_and_send(frame, *unit, received);
  };
  // The aux pass over a batch's tiles (none unless the frame asks for it), its times added to `timing`.
  const auto render_aux = [&](std::span<const BatchTile> tiles, uint64_t pixels,
                              BatchTiming& timing) -> std::shared_ptr<HostPixels> {
    if (!frame->aux.any()) return nullptr;
    auto words = frame->scene->renderer->host_pixels(pixels);  // pooled (pinned) like the colour: no fresh pages a batch
    const BatchTiming aux = frame->scene->renderer->render_aux_batch(frame->aux_cameras, frame->settings,
                                                                     frame->aux_settings, tiles, words->pixels, stop);
    timing.launch_ms += aux.launch_ms;
    timing.readback_ms += aux.readback_ms;
    return words;
  };
  // A batched launch's tiles, one after another in its output, a unit each.
  const auto lay_out_batch = [&] {
    std::vector<BatchTile> tiles;
    for (size_t i = 0; i < batch.tiles.size(); ++i) {
      const net::TileSpec spec = frame->grid.tile(batch.tiles[i].first);
      tiles.push_back({{spec.x0, spec.y0, spec.width, spec.height}, spec.eye, total_pixels});
      units[i].outputs.push_back({batch.tiles[i].first, spec, total_pixels});
      total_pixels += uint64_t(spec.width) * spec.height;
    }
    return tiles;
  };
  try {
    frame->scene->renderer->set_sun(frame->sun);  // raytrace and every mode's aux pass
    switch (frame->mode) {
      case Frame::Mode::raytrace: {
        const std::vector<BatchTile> tiles = lay_out_batch();
        TileRenderer& renderer = *frame->scene->renderer;
        auto pixels = renderer.host_pixels(total_pixels);
        timing = renderer.render_raytrace_batch(frame->cameras, frame->settings, tiles, pixels->pixels, stop);
        const auto aux = render_aux(tiles, total_pixels, timing);
        for (auto& unit : units) {
          unit.pixels = pixels;
          unit.aux = aux;
        }
        break;
      }
      case Frame::Mode::pathtrace: {
        PathTraceRenderer& renderer =
            pathtrace_renderer(*frame->scene, {context_.scenes.renderer_options(), context_.config.pathtrace_cpu_threads});
        renderer.set_sun(frame->sun);
        // Each pair a unit: eye 0's pixels, then (stereo) eye 1's, pairs one after another.
        std::vector<PtBatchTile> tiles;
        std::vector<BatchTile> eye_tiles;  // every eye's rectangle where its pixels lie, for the aux pass
        uint64_t end = 0;
        for (size_t i = 0; i < batch.tiles.size(); ++i) {
          const uint32_t tile = batch.tiles[i].first;
          const net::TileSpec spec = frame->grid.tile(tile);
          const uint64_t eye_pixels = uint64_t(spec.width) * spec.height;
          const TileRect rect{spec.x0, spec.y0, spec.width, spec.height};
          tiles.push_back({tile, rect, end});
          eye_tiles.push_back({rect, 0, end});
          units[i].outputs.push_back({tile, spec, end});
          if (frame->tile_pairs) {
            units[i].outputs.push_back({tile + frame->grid.tiles_per_eye(), spec, end + eye_pixels});
            eye_tiles.push_back({rect, 1, end + eye_pixels});
          }
          end += eye_pixels * (frame->tile_pairs ? 2 : 1);
          total_pixels += eye_pixels;  // shares of the batch's times go by a pair's pixels per eye
        }
        // The aux pass first: the pairs go to the encoders one by one as the path tracer finishes them.
        BatchTiming aux_timing;
        const auto aux = render_aux(eye_tiles, end, aux_timing);
        auto pixels = frame->scene->renderer->host_pixels(end);
        // Each pair goes to an encoder as soon as it is on the host, while the device renders the
        // next ones (its times: the batch's until then, its share; device: launches, merges and
        // the resolve with its readback).
        renderer.render_tiles(frame->pt_view, frame->settings, frame->pt, tiles, pixels->pixels, stop,
                              [&](size_t i, std::span<const uint32_t>, const PtTileStats& stats) {
                                if (context_.config.slowdown_ms)
                                  std::this_thread::sleep_for(std::chrono::milliseconds(context_.config.slowdown_ms));
                                units[i].pixels = pixels;
                                units[i].aux = aux;
                                units[i].samples_per_pixel = float(stats.accumulated_spp);
                                const double part = part_of(i);
                                encode_unit(i, std::chrono::duration<double, std::micro>(Clock::now() - start).count() * part,
                                            double(thread_cpu_us() - cpu_start) * part, stats.ms * 1000.0, 0.0);
                              });
        break;
      }
      case Frame::Mode::vct: {
        VctGridSlot& grid = vct_grid(*frame->scene, context_.scenes.renderer_options(), frame->vct_options);
        if (frame->scene->motion) grid.renderer->place_instances(frame->scene->motion->top_level());  // the frame's instant
        set_vct_lights(grid, frame->move_light, frame->move_light_index, frame->sun);
        const std::vector<BatchTile> tiles = lay_out_batch();
        auto pixels = frame->scene->renderer->host_pixels(total_pixels);
        timing = grid.renderer->render_tiles(frame->cameras, frame->settings, frame->vct_frame, tiles, pixels->pixels, stop);
        const auto aux = render_aux(tiles, total_pixels, timing);
        for (auto& unit : units) {
          unit.pixels = pixels;
          unit.aux = aux;
        }
        break;
      }
    }
  } catch (const RenderCanceled&) {
    return;  // canceled or closing: the tiles' counts went with the frame
  } catch (const std::exception& e) {
    frame->canceled = true;
    auto self = shared_from_this();
    const std::string message = "rendering tile " + std::to_string(batch.tiles[0].first) + " of frame " +
                                std::to_string(frame->id) + " failed: " + e.what();
    asio::post(connection_->executor(), [self, message, id = frame->id] { self->send_error(wire::ErrorMessage::RENDER, message, id); });
    return;
  }
  const bool streamed = frame->mode == Frame::Mode::pathtrace;  // its units went as they were done
  if (context_.config.slowdown_ms && !streamed)
    std::this_thread::sleep_for(std::chrono::milliseconds(context_.config.slowdown_ms * batch.tiles.size()));
  const auto rendered = Clock::now();
  const double render_us = std::chrono::duration<double, std::micro>(rendered - start).count();
  const double cpu_us = double(thread_cpu_us() - cpu_start);
  context_.counters.tiles_rendered += batch.tiles.size();
  context_.counters.busy_us += uint64_t(render_us);
  if (!streamed)
    for (size_t i = 0; i < units.size(); ++i) {
      const double part = part_of(i);
      encode_unit(i, render_us * part, cpu_us * part, timing.launch_ms * 1000.0 * part, timing.readback_ms * 1000.0 * part);
    }
}

void WorkerSession::encode_and_send(const std::shared_ptr<Frame>& frame, Unit& unit, Clock::time_point received) {
  std::vector<wire::TileResult> results(unit.outputs.size());
  if (!frame->canceled && connection_->is_open()) {
    for (size_t i = 0; i < unit.outputs.size(); ++i) {
      const auto encode_start = Clock::now();
      const auto& out = unit.outputs[i];
      wire::TileResult& result = results[i];
      if (i == 0) result = unit.timing;  // a pair's times are on its first (left) result
      result.set_frame_id(frame->id);
      result.set_tile_id(out.tile_id);
      result.set_x0(out.spec.x0);
      result.set_y0(out.spec.y0);
      result.set_width(out.spec.width);
      result.set_height(out.spec.height);
      if (frame->mode == Frame::Mode::pathtrace) result.set_samples_per_pixel(unit.samples_per_pixel);
      const size_t count = size_t(out.spec.width) * out.spec.height;
      std::span<const uint32_t> colour = unit.pixels->pixels.subspan(out.offset, count);
      std::vector<uint32_t> transparent;
      if (unit.aux) {
        const auto aux = std::span<const uint32_t>(unit.aux->pixels).subspan(out.offset, count);
        if (frame->aux.transparent) {
          transparent.assign(colour.begin(), colour.end());
          apply_transparency(transparent, aux);
          colour = transparent;
        }
        if (frame->aux.depth) {
          const std::vector<uint8_t> depth = encode_inverse_depth(aux, frame->zstd_level);
          result.set_depth(depth.data(), depth.size());
        }
      }
      net::encode_tile_pixels(colour, frame->zstd_level, result);
      const auto now = Clock::now();
      result.set_encode_us(uint32_t(std::chrono::duration_cast<std::chrono::microseconds>(now - encode_start).count()));
      result.set_worker_us(uint32_t(std::clamp<int64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(now - received).count(), 0, UINT32_MAX)));
    }
  }
  unit.pixels.reset();  // pinned memory back to the renderer's pool
  unit.aux.reset();

  // Chosen under the lock, serialized and sealed after it: the encoder threads seal their
  // messages side by side (Connection::send keeps each frame's place and sequence number).
  wire::Envelope out;
  {
    std::lock_guard lock(mutex_);
    --units_encoding_;
    if (frame->canceled || !connection_->is_open()) return;
    --frame->queued;
    --queued_tiles_;
    if (frame->reply == wire::EACH_TILE) {
      if (results.size() == 1) {
        *out.mutable_tile_result() = std::move(results[0]);
      } else {  // both eyes of a pair in one message
        auto& batch = *out.mutable_tile_batch();
        batch.set_frame_id(frame->id);
        for (auto& r : results) *batch.add_tiles() = std::move(r);
      }
    } else {
      auto& batch = *frame->batch.mutable_tile_batch();
      batch.set_frame_id(frame->id);
      for (auto& r : results) {
        frame->batch_bytes += r.data().size() + r.depth().size();
        *batch.add_tiles() = std::move(r);
        frame->batch_received.push_back(received);
      }
      // The frame's batch goes out in parts of about kBatchPartBytes, so that parts are sealed
      // here and opened on the master side by side instead of one after another.
      if (frame->queued != 0 && frame->batch_bytes < net::kBatchPartBytes) return;
      // The tiles waited here for the rest of the part: their time on the worker ends now.
      const auto now = Clock::now();
      for (int i = 0; i < batch.tiles_size(); ++i)
        batch.mutable_tiles(i)->set_worker_us(uint32_t(std::clamp<int64_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(now - frame->batch_received[size_t(i)]).count(), 0, UINT32_MAX)));
      out.Swap(&frame->batch);
      frame->batch_bytes = 0;
      frame->batch_received.clear();
    }
  }
  connection_->send(out);
}

}  // namespace tessera::worker
