#include "worker/daemon/worker_session.h"

#include "common/base/error.h"
#include "common/base/hash.h"
#include "common/base/version.h"
#include "common/net/auth.h"
#include "common/net/log.h"
#include "common/net/message_limits.h"
#include "common/net/peer_text.h"
#include "common/net/protocol.h"
#include "worker/daemon/frame_setup.h"
#include "worker/daemon/mode_renderers.h"
#include "worker/daemon/worker_session_parts.h"

namespace tessera::worker {

using net::ProtocolError;

namespace {

constexpr size_t kMaxFramesKept = 16;               // frames a connection may have open at once
constexpr uint64_t kMaxQueuedTiles = 2 * net::kMaxTilesPerFrame;
// Work of one pathtrace tile (pixels x samples per eye): bounds what one request can ask of the device.
constexpr uint64_t kMaxTilePixelSamples = uint64_t(1) << 30;

}  // namespace

net::LogBudget& peer_caused_log() {
  static net::LogBudget budget(2, 20);  // 20 lines at once, 2 a second after that
  return budget;
}

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
  info.add_features(net::kSceneMotionFeature);
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
    frame->motion = frame_motion(request, scene_->motion ? scene_->motion->instance_count() : 0);
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

}  // namespace tessera::worker
