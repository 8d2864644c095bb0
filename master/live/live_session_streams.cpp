// The live session's video streams (master/web/PROTOCOL.md, "Video streams"): which codec a page
// gets, its encoded frames on their way to it, and their figures for the status, the session
// message and the statistics.
#include <nlohmann/json.hpp>

#include "common/net/log.h"
#include "master/live/live_figures.h"
#include "master/live/live_session.h"

namespace tessera::master::live {

using nlohmann::json;

void LiveSession::open_stream(uint64_t connection, Connection& c, const Hello& hello) {
  if (hello.decoders_refused) {
    net::log_warning("live: page " + c.peer + ": decoders refused: " + *hello.decoders_refused);
    send_text(connection, json{{"type", "event"}, {"t", ms_between(started_, Clock::now())},
                               {"text", "decoders refused: " + *hello.decoders_refused + "; this page gets JPEG"}}.dump());
  }
  const auto codec = choose_stream_codec(options_.stream.codec, hello.decoders);
  if (!codec) {
    if (options_.stream.codec != "auto" && options_.stream.codec != "jpeg")
      net::log_info("live: page " + c.peer + " does not decode " + options_.stream.codec + ": it gets JPEG");
    return;
  }
  c.stream = std::make_shared<PageStream>(
      connection, *codec, c.depth, options_.stream.rate, options_.stream.encoder_threads, options_.stream.strips,
      *stream_pool_,
      [this](uint64_t to, uint64_t frame_id, std::shared_ptr<const std::string> message, const EncodedFrameInfo& info) {
        stream_frame_sent(to, frame_id, std::move(message), info);
      });
  net::log_info("live: page " + c.peer + " gets " + std::string(video::codec_name(*codec)));
}

void LiveSession::stream_frame_sent(uint64_t connection, uint64_t frame_id, std::shared_ptr<const std::string> message,
                                    const EncodedFrameInfo& info) {
  {
    std::lock_guard lock(mutex_);
    if (connection == driver_) {
      queued_at_[frame_id] = Clock::now();
      while (queued_at_.size() > kPoseMemory) queued_at_.erase(queued_at_.begin());
      if (auto f = frames_.find(frame_id); f != frames_.end()) {
        const auto c = connections_.find(connection);
        f->second.codec = c != connections_.end() && c->second.stream ? std::string(video::codec_name(c->second.stream->codec())) : "jpeg";
        f->second.encode_ms = info.encode_ms;
        f->second.video_bytes = info.video_bytes;
        f->second.key_frame = info.key;
        f->second.bitrate_mbit = info.bitrate_mbit;
        f->second.scale = info.scale;
      }
    }
  }
  server_->send_frame(connection, frame_id, std::move(message));
}

void LiveSession::offer_to_streams(const std::shared_ptr<const ShownFrame>& shown) {
  for (const auto& [id, c] : connections_)
    if (c.greeted && c.stream) c.stream->offer(shown);
}

bool LiveSession::jpeg_wanted() const {
  for (const auto& [id, c] : connections_)
    if (c.greeted && !c.stream) return true;
  // No page yet (or only pages still saying hello): the newest frame waits in JPEG for a page that comes.
  return std::none_of(connections_.begin(), connections_.end(), [](const auto& c) { return c.second.greeted; });
}

json LiveSession::stream_status() const {
  const auto d = connections_.find(driver_);
  if (d == connections_.end() || !d->second.stream)
    return {{"codec", "jpeg"}, {"mbit_s", 0.0}, {"bitrate_mbit", 0.0}, {"encode_ms", 0.0}, {"scale", 1.0}, {"key_frames", 0}};
  const StreamFigures f = d->second.stream->figures();
  return {{"codec", f.codec}, {"mbit_s", f.mbit_s}, {"bitrate_mbit", f.bitrate_mbit}, {"encode_ms", f.encode_ms},
          {"scale", f.scale}, {"key_frames", f.key_frames}};
}

json LiveSession::stream_session(const Connection& c) const {
  const double bitrate = c.stream ? c.stream->bitrate_mbit() : options_.stream.rate.start_mbit;
  return {{"codec", c.stream ? std::string(video::codec_name(c.stream->codec())) : std::string("jpeg")},
          {"stream", {{"bitrate_mbit", bitrate}, {"auto", options_.stream.rate.automatic}}}};
}

}  // namespace tessera::master::live
