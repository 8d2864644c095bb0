#include "master/cluster/worker_link.h"

#include "common/base/hash.h"
#include "common/net/auth.h"
#include "common/net/message_limits.h"
#include "common/net/peer_text.h"
#include "common/net/protocol.h"

namespace tessera::master {

using net::ProtocolError;

WorkerLink::WorkerLink(asio::io_context& io, int index, net::HostPort address, const LinkOptions& options,
                       std::shared_ptr<const SceneFile> scene, TaskPool* open_pool, Sink sink)
    : io_(io),
      index_(index),
      address_(std::move(address)),
      options_(options),
      scene_(std::move(scene)),
      open_pool_(open_pool),
      sink_(std::move(sink)),
      resolver_(io),
      socket_(io),
      connect_timer_(io) {}

void WorkerLink::give_up(const std::string& reason) {
  if (state_ == State::closed) return;
  state_ = State::closed;
  connect_timer_.cancel();
  LinkEvent event;
  event.kind = LinkEvent::Kind::failed;
  event.worker = index_;
  event.reason = reason;
  sink_(std::move(event));
}

void WorkerLink::connect() {
  auto self = shared_from_this();
  connect_timer_.expires_after(options_.connect_timeout);
  connect_timer_.async_wait([self](const asio::error_code& ec) {
    if (ec || self->state_ != State::connecting) return;
    asio::error_code ignored;
    self->resolver_.cancel();
    self->socket_.close(ignored);
    self->give_up("no connection within " + std::to_string(self->options_.connect_timeout.count() / 1000.0).substr(0, 4) + " s");
  });
  resolver_.async_resolve(address_.host, std::to_string(address_.port),
                          [self](const asio::error_code& ec, asio::ip::tcp::resolver::results_type results) {
                            if (self->state_ != State::connecting) return;
                            if (ec) return self->give_up("cannot resolve " + self->address_.host + ": " + ec.message());
                            asio::async_connect(self->socket_, results, [self](const asio::error_code& ec2, const auto&) {
                              if (self->state_ != State::connecting) return;
                              if (ec2) return self->give_up("cannot connect: " + ec2.message());
                              self->connect_timer_.cancel();
                              self->connected(std::move(self->socket_));
                            });
                          });
}

void WorkerLink::connected(asio::ip::tcp::socket socket) {
  connection_ = net::Connection::create(std::move(socket));
  connection_->set_open_pool(open_pool_);
  state_ = State::handshake;
  auto self = shared_from_this();
  connection_->start([self](wire::Envelope& m) { self->on_message(m); }, [self](const std::string& r) { self->on_closed(r); });
  connection_->set_deadline(options_.handshake_timeout, "no handshake within the time limit");
  handshake_.emplace(options_.secret, options_.client_name);
  connection_->send(handshake_->hello());
}

void WorkerLink::send(const wire::Envelope& message) {
  if (connection_) connection_->send(message);
}

void WorkerLink::close(const std::string& reason) {
  asio::post(io_, [self = shared_from_this(), reason] {
    if (self->connection_) {
      if (self->failure_.empty()) self->failure_ = reason;
      self->connection_->close(reason);
    } else {
      self->resolver_.cancel();
      asio::error_code ignored;
      self->socket_.close(ignored);
      self->give_up(reason);
    }
  });
}

void WorkerLink::refuse(const std::string& reason) {
  failure_ = reason;
  wire::Envelope m;
  m.mutable_refused()->set_reason(reason);
  connection_->send(m);
  connection_->close_after_flush(reason);
}

void WorkerLink::on_message(wire::Envelope& message) {
  if (state_ == State::handshake) return handle_handshake(message);
  const auto body = message.body_case();
  if (body == wire::Envelope::kRefused) {
    failure_ = "refused by the worker: " + net::printable_peer_text(message.refused().reason());
    return connection_->close(failure_);
  }
  if (body == wire::Envelope::kError && (state_ != State::ready || message.error().fatal())) {
    failure_ = "the worker reports: " + net::printable_peer_text(message.error().message());
    return connection_->close(failure_);
  }
  const auto expect = [&](wire::Envelope::BodyCase wanted) {
    if (body != wanted) throw ProtocolError("expected " + net::body_name(wanted) + ", got " + net::body_name(message));
  };
  switch (state_) {
    case State::await_scene:
    case State::pushing: {
      if (body == wire::Envelope::kHeartbeat) return;
      expect(wire::Envelope::kSceneStatus);
      const auto& status = message.scene_status();
      if (status.content_hash() != scene_->hash) throw ProtocolError("scene status for another scene");
      if (status.state() == wire::SceneStatus::MISSING && state_ == State::await_scene) {
        state_ = State::pushing;
        pushed_ = true;
        return push_chunk(0);
      }
      if (status.state() != wire::SceneStatus::READY) {
        failure_ = "the worker cannot load the scene: " +
                   (status.message().empty() ? std::string("no reason given") : net::printable_peer_text(status.message(), 300));
        return connection_->close(failure_);
      }
      connection_->cancel_deadline();
      state_ = State::ready;
      LinkEvent event;
      event.kind = LinkEvent::Kind::ready;
      event.worker = index_;
      event.info = info_;
      event.scene = status;
      event.scene.set_device(net::printable_peer_text(status.device(), 120));
      // fast | compact; empty from workers that predate the choice, which hold the fast profile
      event.scene.set_scene_memory(status.scene_memory() == "compact" ? "compact" : "fast");
      event.pushed = pushed_;
      sink_(std::move(event));
      return;
    }
    case State::ready: {
      if (body != wire::Envelope::kTileResult && body != wire::Envelope::kTileBatch && body != wire::Envelope::kError &&
          body != wire::Envelope::kWorkerStats && body != wire::Envelope::kHeartbeat)
        throw ProtocolError("unexpected " + net::body_name(message) + " from a worker");
      LinkEvent event;
      event.kind = LinkEvent::Kind::message;
      event.worker = index_;
      event.wire_bytes = message.ByteSizeLong() + 4 + net::kSealTagBytes;
      event.message = std::move(message);
      sink_(std::move(event));
      return;
    }
    case State::connecting:
    case State::handshake:
    case State::closed: return;
  }
}

void WorkerLink::handle_handshake(const wire::Envelope& message) {
  net::HandshakeStep step = handshake_->on_message(message);
  switch (step.kind) {
    case net::HandshakeStep::Kind::wait: return;
    case net::HandshakeStep::Kind::reply: return connection_->send(*step.message);
    case net::HandshakeStep::Kind::refuse:
      temporary_ = false;
      return refuse(step.reason);
    case net::HandshakeStep::Kind::peer_ended:
      temporary_ = message.has_refused() ? message.refused().temporary() : message.has_error();
      failure_ = step.reason;
      return connection_->close(failure_);
    case net::HandshakeStep::Kind::authenticated: return authenticated();
  }
}

void WorkerLink::authenticated() {
  connection_->seal_session(handshake_->session_keys(), net::Role::master);
  info_ = handshake_->worker_info();
  // what the worker calls itself ends up in log lines and on the live page: printable, one line
  info_.set_name(net::printable_peer_text(info_.name(), 64));
  info_.set_version(net::printable_peer_text(info_.version(), 120));
  connection_->cancel_deadline();
  connection_->set_frame_limit(net::kMaxFrameBytes);
  connection_->enable_heartbeats(options_.heartbeat_interval, options_.heartbeat_timeout, [] { return wire::Heartbeat{}; });
  bool has_mode = false;
  for (const auto& mode : info_.modes()) has_mode |= mode == options_.mode;
  if (!has_mode) {
    failure_ = "the worker does not implement render mode " + options_.mode;
    return connection_->close(failure_);
  }
  wire::Envelope load;
  load.mutable_load_scene()->set_content_hash(scene_->hash);
  load.mutable_load_scene()->set_name(scene_->name);
  load.mutable_load_scene()->set_size_bytes(scene_->bytes->size());
  if (options_.prepare_vct) *load.mutable_load_scene()->mutable_prepare_vct() = *options_.prepare_vct;
  connection_->send(load);
  connection_->set_deadline(options_.scene_timeout, "the scene was not ready within the time limit");
  state_ = State::await_scene;
}

void WorkerLink::push_chunk(uint64_t offset) {
  if (state_ != State::pushing || !connection_->is_open()) return;
  const auto& bytes = *scene_->bytes;
  const uint64_t size = std::min<uint64_t>(net::kSceneChunkBytes, bytes.size() - offset);
  wire::Envelope chunk;
  auto& c = *chunk.mutable_scene_chunk();
  c.set_content_hash(scene_->hash);
  c.set_offset(offset);
  c.set_total_size(bytes.size());
  c.set_data(bytes.data() + offset, size);
  c.set_last(offset + size == bytes.size());
  // One chunk queued at a time: the next goes out once this one is written, so a large scene
  // never sits in the send queue whole.
  auto self = shared_from_this();
  connection_->send(chunk, c.last() ? std::function<void()>{} : [self, next = offset + size] { self->push_chunk(next); });
}

void WorkerLink::on_closed(const std::string& reason) {
  const State was = state_;
  state_ = State::closed;
  LinkEvent event;
  event.worker = index_;
  event.reason = failure_.empty() ? reason : failure_;
  event.kind = was == State::ready ? LinkEvent::Kind::lost : LinkEvent::Kind::failed;
  event.temporary = was == State::handshake && temporary_;
  sink_(std::move(event));
}

}  // namespace tessera::master
