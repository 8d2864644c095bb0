#pragma once
// One page's video stream (master/web/PROTOCOL.md, "Video streams"): its own encoder, fed the
// frames the session shows. Encoding runs on the session's stream pool, so it overlaps the next
// frame's rendering. A slow page skips frames before they are encoded, never after: the next frame
// is encoded only once the previous one is written to the page's socket (the server's queue never
// has to drop an encoded frame, which would break the references of the frames after it), and a
// frame that comes while one is in flight waits, replaced by any newer one. Key frames: the first,
// after a size, stereo or scale change, and on the page's request. The rate controller follows
// the page's `displayed` reports and the socket; held-pose refinements get a higher rate. Each
// frame is cut into horizontal strips, each its own one-threaded stream (common/video/video_strips.h),
// coded in parallel on the pool and sent in one message.
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/base/task_pool.h"
#include "common/image/image.h"
#include "common/video/video_encoder.h"
#include "common/video/video_strips.h"
#include "master/live/rate_controller.h"

namespace tessera::master::live {

// A frame as the session shows it (after accumulation), shared by every page's stream.
struct ShownFrame {
  uint64_t frame_id = 0;
  nlohmann::json header;            // the frame header without bands, video and sections
  std::shared_ptr<const ImageRgba8> image;
  std::shared_ptr<const std::string> depth, alpha;  // zlib sections (null: none)
  float depth_near = 0;
  uint32_t depth_scale = 1;
  bool refinement = false;          // refines a held pose (more than one sample)
};

// The stream's figures for the status message and the statistics.
struct StreamFigures {
  std::string codec;
  double mbit_s = 0;        // video bytes written over the last 2 s
  double bitrate_mbit = 0;  // the encoder's target now
  double encode_ms = 0;     // median over the last 2 s (conversion and encoding)
  double scale = 1;
  uint64_t key_frames = 0;
};

// What one encoded frame was, for the statistics of the driver's frames.
struct EncodedFrameInfo {
  uint64_t frame_id = 0;
  size_t video_bytes = 0;
  bool key = false;
  double encode_ms = 0, bitrate_mbit = 0, scale = 1;
};

// The frames a second a stream's per-frame byte budget divides its bitrate by, given the mean
// interval between its frames: the target display rate (72), or the stream's own rate when faster.
double frame_rate_for_budget(double frame_interval_ms);

class PageStream : public std::enable_shared_from_this<PageStream> {
 public:
  using Clock = std::chrono::steady_clock;
  // Hands a frame message to the page's connection (it is written, then written() follows).
  using Send = std::function<void(uint64_t connection, uint64_t frame_id, std::shared_ptr<const std::string> message,
                                  const EncodedFrameInfo& info)>;

  // `strips`: a frame's strips (0: video::strip_count_for the coded height and `encoder_threads`).
  PageStream(uint64_t connection, video::Codec codec, bool wants_depth, RateOptions rate, unsigned encoder_threads, unsigned strips,
             TaskPool& pool, Send send);
  ~PageStream();

  // Any thread. The newest frame the page should see; encoded now, or after the one in flight.
  void offer(std::shared_ptr<const ShownFrame> frame);
  void keyframe_requested();
  // The server wrote the frame to the socket (or dropped it, when the page left). Returns the
  // message's bytes (0: not this stream's frame).
  size_t written(uint64_t frame_id, bool sent);
  // The page's `displayed`: drawn at page time t, its message received at `received` (same clock).
  void displayed(uint64_t frame_id, std::optional<double> received, double t);
  void close();  // the page left: nothing more is encoded or sent

  video::Codec codec() const { return codec_; }
  StreamFigures figures() const;
  double bitrate_mbit() const;
  bool rate_automatic() const { return rate_.automatic(); }

 private:
  struct InFlight {
    Clock::time_point queued, written;
    size_t bytes = 0, message_bytes = 0;  // the video, the whole message
    double encode_ms = 0;
    bool done = false;  // written to the socket
  };
  struct Written {
    Clock::time_point at;
    size_t bytes = 0;
    double encode_ms = 0;
  };
  void start(std::shared_ptr<const ShownFrame> frame);  // mutex_ held
  void encode(const std::shared_ptr<const ShownFrame>& frame, bool key);  // the pool's thread

  const uint64_t connection_;
  const video::Codec codec_;
  const bool wants_depth_;
  const unsigned threads_, strips_;
  TaskPool& pool_;
  Send send_;

  mutable std::mutex mutex_;
  RateController rate_;
  bool busy_ = false, closed_ = false, key_requested_ = false;
  bool at_socket_ = false;  // busy: the frame is encoded and handed to the socket (since handed_at_)
  std::shared_ptr<const ShownFrame> waiting_;  // offered while busy: the next to encode
  Clock::time_point handed_at_{}, last_offer_{};
  double frame_interval_ms_ = 1000.0 / 60;     // running mean between offers
  std::map<uint64_t, InFlight> sent_;          // recent frames: queued and written times, for acks
  std::deque<Written> recent_;
  uint64_t key_frames_ = 0;

  // The encoder's side (one encode at a time: busy_).
  std::unique_ptr<video::StripEncoder> encoder_;  // the picture's strips, each its own stream, coded in parallel on pool_
  int source_width_ = 0, source_height_ = 0;
  double encoder_scale_ = 1, encoder_mbit_ = 0;
  uint64_t next_seq_ = 0;
};

}  // namespace tessera::master::live
