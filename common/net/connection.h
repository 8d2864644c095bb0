#pragma once
// One framed, asynchronous protocol connection over TCP (Asio). Reads frames one at a time
// within the connection's size limit, hands each parsed message to a handler, and queues
// outgoing frames; everything runs on the socket's io_context thread, while send() and close()
// may be called from any thread. Protocol violations end the connection with a reason that is
// logged locally and sent to the peer as a fatal Error. Once the handshake is done, seal_session()
// switches both directions to sealed frames (frame_cipher.h).
//
// Sealing and opening run off the io thread where they can: send() seals on the calling thread
// (a worker's tile encoder threads seal their tiles side by side), and with set_open_pool() large
// sealed frames are opened and parsed on a pool while the io thread reads on. Order is kept both
// ways: a frame's place on the stream and its sequence number are taken together when send()
// starts, and frames go to the socket in that order once sealed; received frames take their
// sequence numbers in arrival order and reach the handler in that order once opened.
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/base/task_pool.h"
#include "common/net/asio.h"
#include "common/net/auth.h"
#include "common/net/frame_cipher.h"
#include "wire.pb.h"

namespace tessera::net {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using MessageHandler = std::function<void(wire::Envelope&)>;
  using CloseHandler = std::function<void(const std::string& reason)>;
  using Clock = std::chrono::steady_clock;

  static std::shared_ptr<Connection> create(asio::ip::tcp::socket socket);
  ~Connection();

  // Starts reading. Handlers run on the io thread; on_close runs exactly once. A message
  // handler that throws ProtocolError ends the connection with that reason.
  void start(MessageHandler on_message, CloseHandler on_close);

  // Any thread. The frame is encoded and sealed on the calling thread; frames go out in the order
  // their send() calls began. `on_written` runs on the io thread once the bytes are handed to the
  // kernel (never if the connection closes first).
  void send(const wire::Envelope& message, std::function<void()> on_written = {});
  // Any thread: closes now, dropping queued output.
  void close(const std::string& reason);
  // Any thread: closes once queued output is written (at most 2 s later).
  void close_after_flush(const std::string& reason);
  // Any thread: sends a fatal ErrorMessage carrying `reason`, then closes after flushing.
  void fail(const std::string& reason, wire::ErrorMessage::Code code = wire::ErrorMessage::PROTOCOL);

  // Io thread, from a message handler: every frame sent after this call and every frame read
  // after the current one is sealed with the session key of its direction; `self` is this end.
  void seal_session(const SessionKeys& keys, Role self);
  bool sealed() const { return sealed_; }
  // Before start(): sealed frames of at least kPooledOpenBytes are opened and parsed on `pool`
  // (which must outlive the connection's io), up to kMaxOpeningBytes of them at a time.
  void set_open_pool(TaskPool* pool) { open_pool_ = pool; }
  static constexpr size_t kPooledOpenBytes = 64 * 1024;
  static constexpr size_t kMaxOpeningBytes = 64 * 1024 * 1024;
  // Io thread. Largest frame accepted from the peer (kHandshakeFrameBytes until raised).
  void set_frame_limit(size_t bytes) { frame_limit_ = bytes; }
  // Io thread. Sends make() every `interval`, and closes when nothing arrived for `timeout`.
  void enable_heartbeats(Clock::duration interval, Clock::duration timeout, std::function<wire::Heartbeat()> make);
  // Io thread. Closes with `reason` unless cancel_deadline() is called within `after`.
  void set_deadline(Clock::duration after, std::string reason);
  void cancel_deadline();
  // Io thread. Stops reading while more than `bytes` of output wait, so a peer that sends
  // requests but does not read the replies cannot grow our memory.
  void set_read_pause_threshold(size_t bytes) { pause_threshold_ = bytes; }

  const std::string& peer() const { return peer_; }
  bool is_open() const { return !closed_; }
  uint64_t queued_bytes() const { return queued_bytes_; }
  uint64_t bytes_sent() const { return bytes_sent_; }
  uint64_t bytes_received() const { return bytes_received_; }
  Clock::time_point last_receive() const { return Clock::time_point(Clock::duration(last_receive_ns_.load())); }
  asio::any_io_executor executor() { return socket_.get_executor(); }

 private:
  explicit Connection(asio::ip::tcp::socket socket);
  struct Outgoing {
    std::vector<uint8_t> frame;
    std::function<void()> on_written;
  };
  // A received frame on its way to the handler: opened inline or on the pool.
  struct Incoming {
    wire::Envelope message;
    std::string error;                // set instead of message when the frame did not open or parse
    size_t bytes = 0;
    std::atomic<bool> ready{false};   // set on the pool, read on the io thread
  };
  void read_header();
  void read_body(size_t offset);
  void dispatch();
  void open_on_pool();
  void deliver_ready();
  bool handle(wire::Envelope& message);  // false when the connection is ending
  void continue_reading();
  void resume_reading();
  void enqueue(Outgoing outgoing);
  void write_next();
  void heartbeat_tick();
  void io_error(const asio::error_code& error, const char* what);
  void do_close(const std::string& reason);
  void touch();

  asio::ip::tcp::socket socket_;
  std::string peer_;
  MessageHandler on_message_;
  CloseHandler on_close_;
  std::array<uint8_t, 4> header_{};
  std::vector<uint8_t> body_;
  size_t frame_limit_;
  size_t pause_threshold_ = 0;
  bool reading_paused_ = false;  // no read outstanding: waiting for output to drain or frames to open
  TaskPool* open_pool_ = nullptr;
  std::deque<std::shared_ptr<Incoming>> incoming_;  // io thread: frames read, not yet handled
  size_t opening_bytes_ = 0;                        // io thread: their bytes
  bool writing_ = false;
  bool closing_ = false;  // close after the queue drains
  std::string closing_reason_;
  std::deque<Outgoing> queue_;
  std::atomic<bool> closed_{false};
  std::atomic<bool> stop_reading_{false};  // set at once by fail()/close_after_flush(), before they run
  std::atomic<uint64_t> queued_bytes_{0}, bytes_sent_{0}, bytes_received_{0};
  std::atomic<int64_t> last_receive_ns_{0};
  asio::steady_timer heartbeat_timer_, deadline_timer_, flush_timer_;
  Clock::duration heartbeat_interval_{}, heartbeat_timeout_{};
  std::function<wire::Heartbeat()> make_heartbeat_;
  // Outgoing order: send() takes a slot (and, sealed, a sequence number) under send_mutex_,
  // seals without it, then hands the frame over; frames are posted to the io thread strictly in
  // slot order, so the stream carries sequence numbers in order whichever thread sealed first.
  std::mutex send_mutex_;
  uint64_t next_slot_ = 0;                  // guarded by send_mutex_
  uint64_t next_posted_slot_ = 0;           // guarded by send_mutex_
  std::map<uint64_t, std::optional<Outgoing>> finished_;  // guarded: sealed ahead of an earlier slot (nullopt: failed)
  std::shared_ptr<FrameSealer> sealer_;     // guarded by send_mutex_
  std::shared_ptr<FrameOpener> opener_;     // io thread; shared with opening tasks
  std::atomic<bool> sealed_{false};
};

}  // namespace tessera::net
