#include "common/net/connection.h"

#include "common/net/framing.h"
#include "common/net/message_limits.h"
#include "common/net/protocol.h"

namespace tessera::net {
namespace {

std::string describe(const asio::ip::tcp::socket& socket) {
  asio::error_code ec;
  const auto endpoint = socket.remote_endpoint(ec);
  if (ec) return "?";
  const auto address = endpoint.address();
  return (address.is_v6() ? "[" + address.to_string() + "]" : address.to_string()) + ":" + std::to_string(endpoint.port());
}

}  // namespace

std::shared_ptr<Connection> Connection::create(asio::ip::tcp::socket socket) {
  return std::shared_ptr<Connection>(new Connection(std::move(socket)));
}

Connection::Connection(asio::ip::tcp::socket socket)
    : socket_(std::move(socket)),
      peer_(describe(socket_)),
      frame_limit_(kHandshakeFrameBytes),
      heartbeat_timer_(socket_.get_executor()),
      deadline_timer_(socket_.get_executor()),
      flush_timer_(socket_.get_executor()) {
  asio::error_code ec;
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);  // small control messages must not wait
  touch();
}

Connection::~Connection() = default;

void Connection::touch() { last_receive_ns_ = Clock::now().time_since_epoch().count(); }

void Connection::start(MessageHandler on_message, CloseHandler on_close) {
  on_message_ = std::move(on_message);
  on_close_ = std::move(on_close);
  read_header();
}

void Connection::read_header() {
  asio::async_read(socket_, asio::buffer(header_), [self = shared_from_this()](const asio::error_code& ec, size_t n) {
    if (self->closed_) return;
    self->bytes_received_ += n;
    if (ec) return self->io_error(ec, "reading");
    self->touch();
    const uint32_t length = decode_frame_length(self->header_);
    const size_t tag = self->opener_ ? kSealTagBytes : 0;
    try {
      check_frame_length(length > tag ? uint32_t(length - tag) : 0, self->frame_limit_);
    } catch (const ProtocolError& e) {
      return self->fail(e.what());
    }
    self->body_.resize(length);
    self->read_body(0);
  });
}

void Connection::read_body(size_t offset) {
  socket_.async_read_some(asio::buffer(body_.data() + offset, body_.size() - offset),
                          [self = shared_from_this(), offset](const asio::error_code& ec, size_t n) {
                            if (self->closed_) return;
                            self->bytes_received_ += n;
                            if (ec) return self->io_error(ec, "reading");
                            self->touch();
                            if (offset + n < self->body_.size()) return self->read_body(offset + n);
                            self->dispatch();
                          });
}

void Connection::dispatch() {
  if (opener_ && open_pool_) return open_on_pool();
  wire::Envelope message;
  try {
    if (opener_) opener_->open(header_, body_);
    message = decode_body(body_);
  } catch (const ProtocolError& e) {
    return fail(e.what());
  }
  if (body_.capacity() > (1u << 20)) body_ = {};  // a large frame's buffer is not kept around
  if (handle(message)) continue_reading();
}

// Every sealed frame goes through incoming_, so the handler sees them in arrival order: small ones
// are opened here at once, large ones on the pool while the next frames are read.
void Connection::open_on_pool() {
  struct Sealed {
    std::array<uint8_t, 4> header;
    std::vector<uint8_t> payload;
    SealTicket ticket;
  };
  auto incoming = std::make_shared<Incoming>();
  incoming->bytes = body_.size();
  incoming_.push_back(incoming);
  opening_bytes_ += incoming->bytes;
  // The sequence number is taken here, in arrival order, whichever thread opens the frame.
  auto sealed = std::make_shared<Sealed>(Sealed{header_, std::move(body_), opener_->next()});
  body_ = {};
  const auto open = [opener = opener_, sealed, incoming] {
    try {
      opener->open(sealed->header, sealed->payload, std::move(sealed->ticket));
      incoming->message = decode_body(sealed->payload);
    } catch (const std::exception& e) {
      incoming->error = e.what();
    }
    sealed->payload = {};
    incoming->ready.store(true, std::memory_order_release);
  };
  if (incoming->bytes < kPooledOpenBytes) {
    open();
    deliver_ready();
  } else {
    open_pool_->post([self = shared_from_this(), open, io = socket_.get_executor()] {
      open();
      asio::post(io, [self] { self->deliver_ready(); });
    });
  }
  continue_reading();
}

void Connection::deliver_ready() {
  while (!incoming_.empty() && incoming_.front()->ready.load(std::memory_order_acquire)) {
    if (closed_ || closing_ || stop_reading_) {
      incoming_.clear();
      opening_bytes_ = 0;
      return;
    }
    const auto incoming = std::move(incoming_.front());
    incoming_.pop_front();
    opening_bytes_ -= incoming->bytes;
    if (!incoming->error.empty()) return fail(incoming->error);
    if (!handle(incoming->message)) return;
  }
  resume_reading();
}

bool Connection::handle(wire::Envelope& message) {
  try {
    if (on_message_) on_message_(message);
  } catch (const ProtocolError& e) {
    fail(e.what());
    return false;
  } catch (const std::exception& e) {
    fail(std::string("could not handle a ") + body_name(message) + ": " + e.what());
    return false;
  }
  return true;
}

void Connection::continue_reading() {
  if (closed_ || closing_ || stop_reading_) return;
  if ((pause_threshold_ && queued_bytes_ > pause_threshold_) || opening_bytes_ > kMaxOpeningBytes) {
    reading_paused_ = true;
    return;
  }
  read_header();
}

void Connection::resume_reading() {
  if (!reading_paused_ || closed_ || closing_ || stop_reading_) return;
  if (pause_threshold_ && queued_bytes_ > pause_threshold_ / 2) return;
  if (opening_bytes_ > kMaxOpeningBytes / 2) return;
  reading_paused_ = false;
  read_header();
}

void Connection::seal_session(const SessionKeys& keys, Role self) {
  const bool master = self == Role::master;
  opener_ = std::make_shared<FrameOpener>(master ? keys.worker_to_master : keys.master_to_worker);
  auto sealer = std::make_shared<FrameSealer>(master ? keys.master_to_worker : keys.worker_to_master);
  std::lock_guard lock(send_mutex_);
  sealer_ = std::move(sealer);
  sealed_ = true;
}

void Connection::send(const wire::Envelope& message, std::function<void()> on_written) {
  Outgoing outgoing{encode_frame(message), std::move(on_written)};
  uint64_t slot = 0;
  std::shared_ptr<FrameSealer> sealer;
  std::optional<SealTicket> ticket;
  {
    std::lock_guard lock(send_mutex_);
    slot = next_slot_++;
    if (sealer_) {
      sealer = sealer_;
      ticket.emplace(sealer_->next());
    }
  }
  std::optional<Outgoing> sealed;
  std::string failure;
  try {
    if (sealer) sealer->seal(outgoing.frame, std::move(*ticket));
    sealed = std::move(outgoing);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  {
    std::lock_guard lock(send_mutex_);
    if (sealed) queued_bytes_ += sealed->frame.size();
    finished_.emplace(slot, std::move(sealed));
    while (!finished_.empty() && finished_.begin()->first == next_posted_slot_) {
      auto node = finished_.extract(finished_.begin());
      ++next_posted_slot_;
      if (!node.mapped()) continue;  // its sequence number is lost: the connection closes below
      asio::post(socket_.get_executor(), [self = shared_from_this(), o = std::move(*node.mapped())]() mutable {
        self->enqueue(std::move(o));
      });
    }
  }
  if (!failure.empty()) close("could not seal a " + body_name(message) + ": " + failure);
}

void Connection::enqueue(Outgoing outgoing) {
  if (closed_) {
    queued_bytes_ -= outgoing.frame.size();
    return;
  }
  queue_.push_back(std::move(outgoing));
  if (!writing_) write_next();
}

void Connection::write_next() {
  writing_ = true;
  asio::async_write(socket_, asio::buffer(queue_.front().frame), [self = shared_from_this()](const asio::error_code& ec, size_t n) {
    self->writing_ = false;
    if (self->closed_) return;
    if (ec) return self->io_error(ec, "writing");
    self->bytes_sent_ += n;
    self->queued_bytes_ -= self->queue_.front().frame.size();
    auto done = std::move(self->queue_.front().on_written);
    self->queue_.pop_front();
    if (done) done();
    if (self->closed_) return;
    self->resume_reading();
    if (!self->queue_.empty()) return self->write_next();
    if (self->closing_) self->do_close(self->closing_reason_);
  });
}

void Connection::close(const std::string& reason) {
  asio::post(socket_.get_executor(), [self = shared_from_this(), reason] { self->do_close(reason); });
}

void Connection::close_after_flush(const std::string& reason) {
  stop_reading_ = true;
  asio::post(socket_.get_executor(), [self = shared_from_this(), reason] {
    if (self->closed_ || self->closing_) return;
    self->closing_ = true;
    self->closing_reason_ = reason;
    if (!self->writing_ && self->queue_.empty()) return self->do_close(reason);
    self->flush_timer_.expires_after(std::chrono::seconds(2));
    self->flush_timer_.async_wait([self](const asio::error_code& ec) {
      if (!ec) self->do_close(self->closing_reason_);
    });
  });
}

void Connection::fail(const std::string& reason, wire::ErrorMessage::Code code) {
  if (closed_) return;
  wire::Envelope error;
  error.mutable_error()->set_code(code);
  error.mutable_error()->set_message(reason);
  error.mutable_error()->set_fatal(true);
  send(error);
  close_after_flush(reason);
}

void Connection::enable_heartbeats(Clock::duration interval, Clock::duration timeout, std::function<wire::Heartbeat()> make) {
  heartbeat_interval_ = interval;
  heartbeat_timeout_ = timeout;
  make_heartbeat_ = std::move(make);
  touch();
  heartbeat_tick();
}

void Connection::heartbeat_tick() {
  if (closed_) return;
  if (Clock::now() - last_receive() > heartbeat_timeout_) {
    const double seconds = std::chrono::duration<double>(heartbeat_timeout_).count();
    char text[96];
    std::snprintf(text, sizeof text, "nothing heard from the peer for %.1f s (stalled or gone)", seconds);
    return do_close(text);
  }
  if (!closing_) {
    wire::Envelope beat;
    *beat.mutable_heartbeat() = make_heartbeat_ ? make_heartbeat_() : wire::Heartbeat{};
    if (queued_bytes_ < (1u << 20)) send(beat);  // a full queue already shows we are alive
  }
  heartbeat_timer_.expires_after(heartbeat_interval_);
  heartbeat_timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
    if (!ec) self->heartbeat_tick();
  });
}

void Connection::set_deadline(Clock::duration after, std::string reason) {
  deadline_timer_.expires_after(after);
  deadline_timer_.async_wait([self = shared_from_this(), reason = std::move(reason)](const asio::error_code& ec) {
    if (!ec) self->fail(reason);
  });
}

void Connection::cancel_deadline() { deadline_timer_.cancel(); }

void Connection::io_error(const asio::error_code& error, const char* what) {
  if (error == asio::error::eof) return do_close("the peer closed the connection");
  if (error == asio::error::operation_aborted) return do_close("connection closed");
  do_close(std::string("connection lost while ") + what + ": " + error.message());
}

void Connection::do_close(const std::string& reason) {
  if (closed_.exchange(true)) return;
  asio::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  heartbeat_timer_.cancel();
  deadline_timer_.cancel();
  flush_timer_.cancel();
  for (const auto& o : queue_) queued_bytes_ -= o.frame.size();
  queue_.clear();
  body_ = {};
  incoming_.clear();
  opening_bytes_ = 0;
  auto on_close = std::move(on_close_);
  on_message_ = nullptr;  // handlers usually hold the owner: drop them to break the cycle
  make_heartbeat_ = nullptr;
  if (on_close) on_close(reason);
}

}  // namespace tessera::net
