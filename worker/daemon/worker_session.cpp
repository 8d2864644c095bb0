#include "worker/daemon/worker_session.h"

#include <chrono>
#include <cmath>
#include <ctime>
#include <thread>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/base/hash.h"
#include "common/base/version.h"
#include "common/net/auth.h"
#include "common/net/log.h"
#include "common/net/message_limits.h"
#include "common/net/peer_text.h"
#include "common/net/protocol.h"
#include "common/net/tile_codec.h"
#include "worker/daemon/frame_setup.h"
#include "worker/daemon/mode_renderers.h"

namespace tessera::worker {

using net::ProtocolError;

namespace {

constexpr size_t kMaxFramesKept = 16;               // frames a connection may have open at once
constexpr uint64_t kMaxQueuedTiles = 2 * net::kMaxTilesPerFrame;
constexpr uint64_t kMaxBatchPixels = uint64_t(1) << 22;  // raytrace tiles of one launch (16 MiB of RGBA8)
// pathtrace tile pairs of one batch, pixels per eye: a launch's buffers hold ~100 bytes a pixel of
// both eyes (192 MiB for a 1024x1024 stereo frame).
constexpr uint64_t kMaxPathtraceBatchPixels = uint64_t(1) << 20;
// vct tiles of one launch: 64 MiB of surface records between its two kernels (a 1024x1024 eye at once).
constexpr uint64_t kMaxVctBatchPixels = uint64_t(1) << 20;
constexpr uint64_t kMaxUnitsEncoding = 1024;             // rendered tiles waiting for an encoder, per connection
// Work of one pathtrace tile (pixels x samples per eye): bounds what one request can ask of the device.
constexpr uint64_t kMaxTilePixelSamples = uint64_t(1) << 30;
constexpr int kDefaultZstdLevel = 1;

// CPU time of the calling thread: render time that other load on the machine does not inflate.
uint64_t thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return uint64_t(t.tv_sec) * 1000000u + uint64_t(t.tv_nsec) / 1000u;
}

}  // namespace

net::LogBudget& peer_caused_log() {
  static net::LogBudget budget(2, 20);  // 20 lines at once, 2 a second after that
  return budget;
}

struct WorkerSession::Frame {
  enum class Mode { raytrace, pathtrace, vct };
  uint64_t id = 0;
  std::shared_ptr<LoadedScene> scene;
  net::TileGrid grid;
  std::array<CameraParams, 2> cameras{};
  RenderSettings settings{};
  Mode mode = Mode::raytrace;
  // pathtrace: a requested tile id names both eyes' rectangles (ids [0, tiles_per_eye)).
  bool tile_pairs = false;
  PathTraceSettings pt;
  PtView pt_view;
  // vct
  VctOptions vct_options;
  VctFrameSettings vct_frame;
  std::optional<std::array<float, 3>> move_light;
  uint32_t move_light_index = 0;
  // Depth and coverage beside the colour (FrameRequest.aux), from the aux pass's cameras (no jitter).
  AuxRequest aux;
  AuxSettings aux_settings{};
  std::optional<SunOverride> sun;  // FrameRequest.sun
  std::array<CameraParams, 2> aux_cameras{};
  wire::ReplyMode reply = wire::BATCH;
  int zstd_level = kDefaultZstdLevel;
  std::atomic<bool> canceled{false};
  // Guarded by the session's mutex.
  uint32_t queued = 0;
  wire::Envelope batch;
  size_t batch_bytes = 0;
  std::vector<std::chrono::steady_clock::time_point> batch_received;  // per tile of `batch`: its request's arrival
};

WorkerSession::WorkerSession(std::shared_ptr<net::Connection> connection, WorkerContext context)
    : connection_(std::move(connection)), context_(context), handshake_(context.config.secret, context.config.name) {}

WorkerSession::~WorkerSession() { abort_push(); }

void WorkerSession::start(Admit admit, std::function<void(const std::string&)> on_closed) {
  admit_ = std::move(admit);
  on_closed_ = std::move(on_closed);
  connection_->set_deadline(context_.config.handshake_timeout, "no handshake within the time limit");
  connection_->set_read_pause_threshold(context_.config.send_backlog_bytes);
  auto self = shared_from_this();
  connection_->start([self](wire::Envelope& m) { self->on_message(m); },
                     [self](const std::string& reason) {
                       for (auto& [id, frame] : self->frames_) frame->canceled = true;
                       self->frames_.clear();
                       self->forget_pending();
                       self->abort_push();
                       self->scene_.reset();
                       if (self->on_closed_) self->on_closed_(reason);
                       self->on_closed_ = nullptr;
                     });
}

void WorkerSession::refuse(const std::string& reason, bool temporary) {
  context_.counters.rejected++;
  wire::Envelope m;
  m.mutable_refused()->set_reason(reason);
  m.mutable_refused()->set_temporary(temporary);
  connection_->send(m);
  connection_->close_after_flush("refused: " + reason);
}

void WorkerSession::send_error(wire::ErrorMessage::Code code, const std::string& message, uint64_t frame_id) {
  // A peer repeating one mistake must not flood the log.
  if (errors_logged_ < 10) net::log_warning(peer() + ": " + message + (++errors_logged_ == 10 ? " (further errors not logged)" : ""));
  wire::Envelope m;
  m.mutable_error()->set_code(code);
  m.mutable_error()->set_message(message);
  m.mutable_error()->set_frame_id(frame_id);
  connection_->send(m);
}

void WorkerSession::on_message(wire::Envelope& message) {
  if (!handshake_.done()) return handle_handshake(message);
  const auto body = message.body_case();
  if (body == wire::Envelope::kError) {  // informational from the master; fatal ones close the link
    const std::string text = net::printable_peer_text(message.error().message());
    peer_caused_log().warning(peer() + " reports: " + text);
    if (message.error().fatal()) connection_->close("the master ended the connection: " + text);
    return;
  }
  switch (body) {
    case wire::Envelope::kHeartbeat: return;
    case wire::Envelope::kLoadScene: return handle_load_scene(message.load_scene());
    case wire::Envelope::kSceneChunk: return handle_scene_chunk(message.scene_chunk());
    case wire::Envelope::kFrameRequest: return handle_frame_request(message.frame_request());
    case wire::Envelope::kTileAssign: return handle_tile_assign(message.tile_assign());
    case wire::Envelope::kCancelFrame: return handle_cancel(message.cancel_frame());
    case wire::Envelope::kStatsRequest: {
      wire::Envelope reply;
      auto& s = *reply.mutable_worker_stats();
      s.set_tiles_rendered(context_.counters.tiles_rendered);
      s.set_frames(context_.counters.frames);
      s.set_busy_us(context_.counters.busy_us);
      s.set_bytes_sent(connection_->bytes_sent());
      s.set_bytes_received(connection_->bytes_received());
      s.set_connections(context_.counters.connections);
      s.set_connections_rejected(context_.counters.rejected);
      connection_->send(reply);
      return;
    }
    default: throw ProtocolError("unexpected " + net::body_name(message) + " after the handshake");
  }
}

void WorkerSession::handle_handshake(const wire::Envelope& message) {
  net::HandshakeStep step = handshake_.on_message(message);
  switch (step.kind) {
    case net::HandshakeStep::Kind::wait: return;
    case net::HandshakeStep::Kind::reply: return connection_->send(*step.message);
    case net::HandshakeStep::Kind::refuse: return refuse(step.reason);
    case net::HandshakeStep::Kind::peer_ended:
      context_.counters.rejected++;
      return connection_->close(step.reason);
    case net::HandshakeStep::Kind::authenticated: {
      const std::string busy = admit_ ? admit_() : std::string{};
      if (!busy.empty()) return refuse(busy, true);
      return welcome(std::move(*step.message));
    }
  }
}

void WorkerSession::welcome(wire::Envelope m) {
  connection_->cancel_deadline();
  connection_->set_frame_limit(net::kMasterFrameBytes);
  context_.counters.connections++;
  auto& info = *m.mutable_welcome()->mutable_info();
  info.set_name(context_.config.name);
  info.set_device(context_.config.device_name);
  info.set_device_memory_bytes(context_.config.device_memory_bytes);
  info.set_gpu_memory_limit(context_.config.gpu_memory_limit);
  info.set_host_threads(context_.config.host_threads);
  info.add_modes(net::kRaytraceMode);
  info.add_modes(net::kPathtraceMode);
  info.add_modes(net::kVctMode);
  info.add_features(net::kEyeViewsFeature);
  info.add_features(net::kAaSampleFeature);
  info.add_features(net::kAuxOutputsFeature);
  info.add_features(net::kSunOverrideFeature);
  for (auto& entry : context_.scenes.entries()) *info.add_scenes() = entry;
  info.set_max_scene_bytes(context_.config.max_scene_bytes);
  info.set_version(build_description());  // the same text as --version, without the program name
  connection_->send(m);
  connection_->seal_session(handshake_.session_keys(), net::Role::worker);  // the welcome was the last frame in clear
  // Heartbeats only after the welcome: the master expects it as the next message.
  auto self = weak_from_this();
  connection_->enable_heartbeats(context_.config.heartbeat_interval, context_.config.heartbeat_timeout, [this, self] {
    wire::Heartbeat beat;
    if (self.lock()) {
      beat.set_tiles_rendered(context_.counters.tiles_rendered);
      beat.set_busy(context_.render.busy());
    }
    return beat;
  });
  context_.render.attach(weak_from_this());
  net::log_info(peer() + ": master authenticated");
}

void WorkerSession::handle_load_scene(const wire::LoadScene& load) {
  if (push_.file) throw ProtocolError("load_scene while a scene push is still in progress");
  if (scene_loading_) throw ProtocolError("load_scene while the previous scene is still loading");
  const uint64_t hash = load.content_hash();
  prepare_vct_.reset();
  if (load.has_prepare_vct()) prepare_vct_ = load.prepare_vct();
  if (scene_ && scene_->hash == hash) {
    wire::Envelope m;
    auto& status = *m.mutable_scene_status();
    status.set_content_hash(hash);
    status.set_state(wire::SceneStatus::READY);
    status.set_device(scene_->renderer->description());
    status.set_device_bytes(scene_->renderer->scene_device_bytes());
    status.set_scene_memory(scene_memory_name(scene_->memory));
    connection_->send(m);
    return;
  }
  scene_.reset();
  if (context_.scenes.has(hash)) return load_scene_async(hash, load.name(), {}, load);
  ask_for_push(load);
}

// The scene is not here (or its file turned out to hold another): MISSING, and the push that follows
// is received into a temporary file.
void WorkerSession::ask_for_push(const wire::LoadScene& load) {
  const uint64_t hash = load.content_hash();
  wire::Envelope m;
  auto& status = *m.mutable_scene_status();
  status.set_content_hash(hash);
  if (load.size_bytes() == 0 || load.size_bytes() > context_.config.max_scene_bytes) {
    status.set_state(wire::SceneStatus::FAILED);
    status.set_message("scene of " + std::to_string(load.size_bytes()) + " bytes: this worker accepts 1.." +
                       std::to_string(context_.config.max_scene_bytes) + " bytes");
    connection_->send(m);
    return;
  }
  push_.hash = hash;
  push_.size = load.size_bytes();
  push_.received = 0;
  push_.name = load.name();
  push_.temp = context_.scenes.temp_path_for_push(hash);
  try {  // a new file only (never through a link or file already there), readable by this user alone
    push_.file = create_new_file(push_.temp, 0600);
  } catch (const Error& e) {
    status.set_state(wire::SceneStatus::FAILED);
    status.set_message("scene " + hash64_hex(hash) + " is missing and cannot be received into the scene directory: " + e.what());
    net::log_warning(peer() + ": " + status.message());
    connection_->send(m);
    return;
  }
  net::log_info(peer() + ": scene " + hash64_hex(hash) + " (" + load.name() + ") missing, asking for a push");
  status.set_state(wire::SceneStatus::MISSING);
  connection_->send(m);
}

void WorkerSession::abort_push() {
  if (!push_.file) return;
  std::fclose(push_.file);
  push_.file = nullptr;
  std::error_code ec;
  std::filesystem::remove(push_.temp, ec);
}

void WorkerSession::handle_scene_chunk(const wire::SceneChunk& chunk) {
  if (!push_.file) throw ProtocolError("scene chunk without a load_scene that asked for it");
  if (chunk.content_hash() != push_.hash || chunk.total_size() != push_.size || chunk.offset() != push_.received ||
      chunk.data().size() > push_.size - push_.received)
    throw ProtocolError("scene chunk out of order or inconsistent with the announced scene");
  if (std::fwrite(chunk.data().data(), 1, chunk.data().size(), push_.file) != chunk.data().size()) {
    abort_push();
    throw ProtocolError("cannot write the pushed scene into the scene directory (disk full?)");
  }
  push_.received += chunk.data().size();
  if (push_.received < push_.size) {
    if (chunk.last()) throw ProtocolError("scene push ended early");
    return;
  }
  const bool ok = std::fclose(push_.file) == 0;
  push_.file = nullptr;
  if (!ok) {
    abort_push();
    throw ProtocolError("cannot write the pushed scene into the scene directory");
  }
  load_scene_async(push_.hash, push_.name, push_.temp.string(), {});
}

void WorkerSession::load_scene_async(uint64_t hash, const std::string& name, const std::string& pushed_file,
                                     std::optional<wire::LoadScene> push_if_gone) {
  scene_loading_ = true;
  auto self = shared_from_this();
  context_.render.post([self, hash, name, pushed_file, prepare = prepare_vct_, push_if_gone] {
    std::shared_ptr<LoadedScene> loaded;
    std::string failure;
    try {
      loaded = pushed_file.empty() ? self->context_.scenes.load(hash) : self->context_.scenes.adopt_pushed(pushed_file, hash, name);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (loaded && prepare) {  // the master announced vct frames: voxelize now, not in the first frame
      try {
        vct_grid(*loaded, self->context_.scenes.renderer_options(), vct_options(*prepare, loaded->scene));
      } catch (const std::exception& e) {
        failure = std::string("vct voxelization failed: ") + e.what();
        loaded.reset();
      }
    }
    asio::post(self->connection_->executor(), [self, hash, loaded, failure, push_if_gone] {
      self->scene_loading_ = false;
      if (!self->connection_->is_open()) return;
      if (!loaded && push_if_gone && !self->context_.scenes.has(hash)) {  // the file changed under us
        net::log_warning(self->peer() + ": " + failure);
        return self->ask_for_push(*push_if_gone);
      }
      wire::Envelope m;
      auto& status = *m.mutable_scene_status();
      status.set_content_hash(hash);
      if (loaded) {
        self->scene_ = loaded;
        status.set_state(wire::SceneStatus::READY);
        status.set_device(loaded->renderer->description());
        status.set_device_bytes(loaded->renderer->scene_device_bytes());
        status.set_scene_memory(scene_memory_name(loaded->memory));
        status.set_load_ms(loaded->load_ms);
        net::log_info(self->peer() + ": scene " + loaded->name + " ready on " + loaded->renderer->description());
      } else {
        status.set_state(wire::SceneStatus::FAILED);
        status.set_message(failure);
        net::log_warning(self->peer() + ": scene " + hash64_hex(hash) + " failed: " + failure);
      }
      self->connection_->send(m);
    });
  });
}

void WorkerSession::handle_frame_request(const wire::FrameRequest& request) {
  const uint64_t id = request.frame_id();
  // Ids need not increase (a master hands out a lost worker's older frame later), but a frame
  // requested twice on one connection is a confused or hostile peer.
  if (id == 0 || frames_.count(id)) throw ProtocolError("frame " + std::to_string(id) + " requested twice (or id 0)");
  if (!scene_ || scene_->hash != request.scene_hash())
    return send_error(wire::ErrorMessage::SCENE,
                      "frame " + std::to_string(id) + " asks for scene " + hash64_hex(request.scene_hash()) +
                          (scene_ ? ", but " + hash64_hex(scene_->hash) + " is loaded" : ", but no scene is loaded"),
                      id);
  if (request.mode_case() != wire::FrameRequest::kRaytrace && request.mode_case() != wire::FrameRequest::kPathtrace &&
      request.mode_case() != wire::FrameRequest::kVct)
    return send_error(wire::ErrorMessage::UNSUPPORTED_MODE,
                      "frame " + std::to_string(id) +
                          " asks for a render mode this worker does not implement (it has: raytrace, pathtrace, vct)",
                      id);
  auto frame = std::make_shared<Frame>();
  frame->id = id;
  frame->scene = scene_;
  try {
    if (request.eyes().layout() != wire::Eyes::MONO && request.eyes().layout() != wire::Eyes::STEREO &&
        request.eyes().layout() != wire::Eyes::LAYOUT_UNSPECIFIED)
      throw Error("unknown eye layout");
    const uint32_t eyes = request.eyes().layout() == wire::Eyes::STEREO ? 2 : 1;
    frame->grid = net::TileGrid(request.image().width(), request.image().height(), request.image().tile_size(), eyes);
    for (uint32_t eye = 0; eye < eyes; ++eye) frame->cameras[eye] = camera_for_eye(request, eye);
    switch (request.mode_case()) {
      case wire::FrameRequest::kPathtrace: {
        frame->mode = Frame::Mode::pathtrace;
        frame->settings = pathtrace_render_settings(request.pathtrace(), scene_->scene);
        frame->pt = pathtrace_settings(request.pathtrace());
        const auto gaze = gaze_of(request);
        frame->pt_view.eyes = frame->cameras;
        frame->pt_view.eye_count = eyes;
        frame->pt_view.gaze_u = gaze[0];
        frame->pt_view.gaze_v = gaze[1];
        frame->tile_pairs = eyes == 2;
        const uint64_t tile_pixels = uint64_t(std::min(frame->grid.tile_size(), request.image().width())) *
                                     std::min(frame->grid.tile_size(), request.image().height());
        if (tile_pixels * frame->pt.spp > kMaxTilePixelSamples)
          throw Error("pathtrace tiles of " + std::to_string(tile_pixels) + " pixels at " + std::to_string(frame->pt.spp) +
                      " samples per pixel exceed this worker's " + std::to_string(kMaxTilePixelSamples) +
                      " pixel samples a tile (use smaller tiles or fewer samples per frame)");
        break;
      }
      case wire::FrameRequest::kVct: {
        const auto& vct = request.vct();
        frame->mode = Frame::Mode::vct;
        frame->vct_options = vct_options(vct, scene_->scene);
        frame->vct_frame = vct_frame_settings(vct);
        frame->settings = vct_render_settings(vct, scene_->scene);
        if (vct.has_move_light()) {
          const std::array<float, 3> to{vct.move_light().x(), vct.move_light().y(), vct.move_light().z()};
          for (float v : to)
            if (!std::isfinite(v)) throw Error("vct move_light is not finite");
          const size_t lights = vct_lights_for_scene(scene_->scene).size();
          if (vct.move_light_index() >= lights)
            throw Error("vct move_light_index " + std::to_string(vct.move_light_index()) + ": the scene has " +
                        std::to_string(lights) + " lights");
          frame->move_light = to;
          frame->move_light_index = vct.move_light_index();
        }
        break;
      }
      default: frame->settings = raytrace_settings(request.raytrace(), scene_->scene); break;
    }
    frame->sun = sun_override(request);
    frame->aux = aux_request(request);
    if (frame->aux.any()) {
      frame->aux_settings = aux_settings(frame->aux, scene_->scene.manifest());
      for (uint32_t eye = 0; eye < eyes; ++eye) frame->aux_cameras[eye] = pixel_centre_camera_for_eye(request, eye);
    }
    if (request.reply() != wire::BATCH && request.reply() != wire::EACH_TILE) throw Error("no reply mode");
    if (request.encoding() == wire::RAW_RGBA8)
      frame->zstd_level = 0;
    else if (request.encoding() == wire::ZSTD_RGBA8)
      frame->zstd_level = request.zstd_level() == 0 ? kDefaultZstdLevel : std::clamp(request.zstd_level(), 1, 19);
    else
      throw Error("unknown tile encoding");
    frame->reply = request.reply();
  } catch (const Error& e) {
    return send_error(wire::ErrorMessage::BAD_REQUEST, "frame " + std::to_string(id) + ": " + e.what(), id);
  }
  // Keep a bounded number of frames: the oldest finished ones go first.
  {
    std::lock_guard lock(mutex_);
    for (auto it = frames_.begin(); it != frames_.end() && frames_.size() >= kMaxFramesKept;)
      it = it->second->queued == 0 ? frames_.erase(it) : std::next(it);
  }
  if (frames_.size() >= kMaxFramesKept)
    throw ProtocolError("more than " + std::to_string(kMaxFramesKept) + " frames in flight on one connection");
  frames_[id] = frame;
  context_.counters.frames++;
  queue_tiles(frame, request.tiles());
}

void WorkerSession::handle_tile_assign(const wire::TileAssign& assign) {
  const auto it = frames_.find(assign.frame_id());
  if (it == frames_.end())
    return send_error(wire::ErrorMessage::BAD_REQUEST, "tiles for unknown frame " + std::to_string(assign.frame_id()),
                      assign.frame_id());
  queue_tiles(it->second, assign.tiles());
}

void WorkerSession::handle_cancel(const wire::CancelFrame& cancel) {
  const auto it = frames_.find(cancel.frame_id());
  if (it == frames_.end()) return;
  it->second->canceled = true;
  std::lock_guard lock(mutex_);
  // Its queued tiles go now (not when the render thread would reach them): a peer that requests
  // and cancels in a loop cannot grow the queue.
  std::erase_if(pending_, [&](const Work& w) { return w.frame == it->second; });
  queued_tiles_ -= it->second->queued;
  it->second->queued = 0;
  frames_.erase(it);
}

void WorkerSession::forget_pending() {
  std::lock_guard lock(mutex_);
  pending_.clear();
}

void WorkerSession::queue_tiles(const std::shared_ptr<Frame>& frame, const google::protobuf::RepeatedField<uint32_t>& tiles) {
  const uint32_t count = frame->tile_pairs ? frame->grid.tiles_per_eye() : frame->grid.tile_count();
  for (uint32_t tile : tiles)
    if (tile >= count)
      throw ProtocolError("tile " + std::to_string(tile) + " outside frame " + std::to_string(frame->id) + "'s " +
                          std::to_string(count) + (frame->tile_pairs ? " stereo tile pairs" : " tiles"));
  if (tiles.empty()) return;
  {
    std::lock_guard lock(mutex_);
    if (queued_tiles_ + tiles.size() > kMaxQueuedTiles)
      throw ProtocolError("more than " + std::to_string(kMaxQueuedTiles) + " tiles queued on one connection");
    queued_tiles_ += tiles.size();
    frame->queued += tiles.size();
    pending_.push_back({frame, std::vector<uint32_t>(tiles.begin(), tiles.end()), Clock::now()});
  }
  context_.render.wake();
}

// A batch: tiles of one frame the render thread renders in one go.
struct WorkerSession::Batch {
  std::shared_ptr<Frame> frame;
  std::vector<std::pair<uint32_t, Clock::time_point>> tiles;  // tile (or pair) id, when its request arrived
};

// What one encoder task turns into one message: a tile, or both eyes of a pathtrace pair.
struct WorkerSession::Unit {
  struct Output {
    uint32_t tile_id = 0;
    net::TileSpec spec;
    uint64_t offset = 0;  // first pixel in the batch's pixels
  };
  std::vector<Output> outputs;
  std::shared_ptr<HostPixels> pixels;
  std::shared_ptr<HostPixels> aux;  // the aux pass's words beside `pixels` (FrameRequest.aux), from the same pool
  wire::TileResult timing;  // render/device/readback/queue fields and batch_tiles, copied into each result
  float samples_per_pixel = 0;
};

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

void WorkerSession::render_batch(Batch& batch) {
  const std::shared_ptr<Frame>& frame = batch.frame;
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
