#include "master/live/page_stream.h"

#include <algorithm>
#include <cmath>

#include "common/net/log.h"
#include "master/live/frame_message.h"

namespace tessera::master::live {
namespace {

// The frame rate a stream's bitrate is spread over: a headset's display rate. A frame's byte budget
// is the bitrate over this rate, or over the stream's own rate when frames come faster; never more
// because frames come late (a larger frame takes longer to encode, send and decode, and comes later
// still).
constexpr double kTargetFps = 72;
constexpr auto kFiguresWindow = std::chrono::seconds(2);
constexpr size_t kFramesRemembered = 256;  // frames whose send times wait for the page's report
constexpr double kRateChangeTolerance = 0.05;  // the encoder's rate follows changes above 5 %
constexpr double kSocketIntervals = 2;     // a frame still unwritten after this many frame intervals: the socket is behind

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

double frame_rate_for_budget(double frame_interval_ms) {
  return std::clamp(1000.0 / std::max(frame_interval_ms, 1e-3), kTargetFps, 240.0);
}

namespace {

int coded_side(int side, double scale) { return std::max(2, int(std::lround(side * scale)) & ~1); }

nlohmann::json strip_table(const std::vector<video::EncodedStrip>& strips) {
  nlohmann::json table = nlohmann::json::array();
  for (const auto& s : strips)
    table.push_back({{"y", s.rows.y}, {"height", s.rows.height}, {"offset", s.offset}, {"bytes", s.bytes}, {"key", s.key}});
  return table;
}

}  // namespace

PageStream::PageStream(uint64_t connection, video::Codec codec, bool wants_depth, RateOptions rate, unsigned encoder_threads,
                       unsigned strips, TaskPool& pool, Send send)
    : connection_(connection), codec_(codec), wants_depth_(wants_depth), threads_(encoder_threads), strips_(strips), pool_(pool),
      send_(std::move(send)),
      rate_(rate) {}

PageStream::~PageStream() = default;

void PageStream::offer(std::shared_ptr<const ShownFrame> frame) {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  const auto now = Clock::now();
  if (last_offer_ != Clock::time_point{}) {
    const double interval = std::clamp(ms_between(last_offer_, now), 1.0, 1000.0);
    frame_interval_ms_ += 0.1 * (interval - frame_interval_ms_);
  }
  last_offer_ = now;
  if (busy_) {
    // The previous frame encoded long ago and still not written: the socket is behind.
    if (at_socket_ && ms_between(handed_at_, now) > kSocketIntervals * frame_interval_ms_) rate_.socket_behind(now);
    waiting_ = std::move(frame);  // a newer frame replaces one that waited: skipped before it was encoded
    return;
  }
  start(std::move(frame));
}

void PageStream::start(std::shared_ptr<const ShownFrame> frame) {
  busy_ = true;
  at_socket_ = false;
  const bool key = key_requested_;
  key_requested_ = false;
  pool_.post([self = shared_from_this(), frame = std::move(frame), key] { self->encode(frame, key); });
}

void PageStream::keyframe_requested() {
  std::lock_guard lock(mutex_);
  key_requested_ = true;
}

void PageStream::encode(const std::shared_ptr<const ShownFrame>& frame, bool key) {
  const auto began = Clock::now();
  double scale, bitrate, interval;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    scale = rate_.scale();
    bitrate = rate_.bitrate_for(frame->refinement);
    interval = frame_interval_ms_;
  }
  try {
    const ImageRgba8& image = *frame->image;
    const int width = coded_side(image.width(), scale), height = coded_side(image.height(), scale);
    // A new size, stereo or scale: a new stream (a new encoder, a key frame, seq from 0).
    const bool fresh = !encoder_ || image.width() != source_width_ || image.height() != source_height_ || scale != encoder_scale_;
    const double encoder_mbit = bitrate * kTargetFps / frame_rate_for_budget(interval);
    if (fresh) {
      video::EncoderSettings settings;
      settings.width = width;
      settings.height = height;
      settings.bitrate_mbit = encoder_mbit;
      settings.fps = kTargetFps;
      // AV1 stays whole unless asked: each SVT-AV1 encoder brings its own thread pool and buffers.
      const int strips = strips_                        ? int(strips_)
                         : codec_ == video::Codec::av1 ? 1
                                                       : video::strip_count_for(height, video::encoder_threads(threads_));
      settings.threads = strips == 1 ? threads_ : 1;  // strips: one thread each, side by side on the pool
      // x264's ultrafast (no CABAC, no deblocking): a third of superfast's encode and decode time
      // for about 1 dB at the same bytes (docs/streaming.md, "Strips").
      settings.h264_preset = "ultrafast";
      encoder_.reset();
      encoder_ = std::make_unique<video::StripEncoder>(codec_, settings, strips, pool_);
      source_width_ = image.width();
      source_height_ = image.height();
      encoder_scale_ = scale;
      next_seq_ = 0;
      encoder_mbit_ = encoder_mbit;
    } else if (std::abs(encoder_mbit - encoder_mbit_) > kRateChangeTolerance * encoder_mbit_) {
      encoder_->set_bitrate(encoder_mbit);  // not for every wobble of the frame rate: a change reconfigures the encoder
      encoder_mbit_ = encoder_mbit;
    }
    const video::I420Image picture = video::rgba_to_i420(image, width, height);
    const video::StripFrame encoded = encoder_->encode(picture, key || fresh);
    const double encode_ms = ms_between(began, Clock::now());
    nlohmann::json header = frame->header;
    header["video"] = {{"codec", video::codec_name(codec_)},
                       {"codec_string", video::codec_string(codec_)},
                       {"key", encoded.key},
                       {"seq", next_seq_++},
                       {"coded_width", width},
                       {"coded_height", height},
                       {"bitrate_mbit", bitrate},
                       {"encode_ms", encode_ms},
                       {"strips", strip_table(encoded.strips)}};
    header["stages"]["encode"] = encode_ms;
    AuxSections aux;
    if (wants_depth_ && frame->depth) {
      aux.depth = frame->depth.get();
      aux.depth_near = frame->depth_near;
      aux.depth_scale = frame->depth_scale;
    }
    aux.alpha = frame->alpha.get();
    auto message = std::make_shared<const std::string>(pack_video_frame_message(std::move(header), encoded.bytes, aux));
    EncodedFrameInfo info{frame->frame_id, encoded.bytes.size(), encoded.key, encode_ms, bitrate, scale};
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      sent_[frame->frame_id] = {Clock::now(), {}, encoded.bytes.size(), message->size(), encode_ms, false};
      while (sent_.size() > kFramesRemembered) sent_.erase(sent_.begin());
      if (encoded.key) ++key_frames_;
      at_socket_ = true;
      handed_at_ = Clock::now();
    }
    send_(connection_, frame->frame_id, std::move(message), info);
  } catch (const std::exception& e) {
    net::log_warning(std::string("live: a page's ") + std::string(video::codec_name(codec_)) + " frame " + std::to_string(frame->frame_id) +
                     " not sent: " + e.what());
    encoder_.reset();  // start afresh with the next frame
    std::lock_guard lock(mutex_);
    busy_ = false;
    if (waiting_ && !closed_) start(std::move(waiting_));
  }
}

size_t PageStream::written(uint64_t frame_id, bool sent) {
  std::lock_guard lock(mutex_);
  const auto it = sent_.find(frame_id);
  if (it == sent_.end() || it->second.done) return 0;  // not this stream's frame
  const auto now = Clock::now();
  if (sent) {
    it->second.written = now;
    it->second.done = true;
    recent_.push_back({now, it->second.bytes, it->second.encode_ms});
    while (!recent_.empty() && now - recent_.front().at > kFiguresWindow) recent_.pop_front();
  } else {
    key_requested_ = true;  // the page never got it: the frames after it would refer to it
  }
  busy_ = false;
  if (waiting_ && !closed_) start(std::move(waiting_));
  return it->second.message_bytes;
}

void PageStream::displayed(uint64_t frame_id, std::optional<double> received, double t) {
  std::lock_guard lock(mutex_);
  const auto it = sent_.find(frame_id);
  if (it == sent_.end() || !it->second.done) return;
  const auto now = Clock::now();
  const double page_ms = received && *received <= t ? t - *received : 0.0;
  const double network = std::max(0.0, ms_between(it->second.written, now) - page_ms);
  rate_.acknowledged(network, frame_interval_ms_, now);
}

void PageStream::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  waiting_.reset();
}

double PageStream::bitrate_mbit() const {
  std::lock_guard lock(mutex_);
  return rate_.bitrate_mbit();
}

StreamFigures PageStream::figures() const {
  std::lock_guard lock(mutex_);
  StreamFigures f;
  f.codec = std::string(video::codec_name(codec_));
  const auto now = Clock::now();
  double bytes = 0;
  std::vector<double> encode;
  for (const auto& r : recent_)
    if (now - r.at <= kFiguresWindow) {
      bytes += double(r.bytes);
      encode.push_back(r.encode_ms);
    }
  f.mbit_s = bytes * 8 / 1e6 / std::chrono::duration<double>(kFiguresWindow).count();
  if (!encode.empty()) {
    std::nth_element(encode.begin(), encode.begin() + ptrdiff_t(encode.size() / 2), encode.end());
    f.encode_ms = encode[encode.size() / 2];
  }
  f.bitrate_mbit = rate_.bitrate_mbit();
  f.scale = rate_.scale();
  f.key_frames = key_frames_;
  return f;
}

}  // namespace tessera::master::live
