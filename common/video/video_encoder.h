#pragma once
// One video encoder for one stream (a page's): I420 pictures in, one encoded frame out per
// picture, at once (no look-ahead, no B-frames, no frame held back), key frames only when asked
// (or when the encoder starts). The bitstream signals BT.709 limited range (yuv_image.h).
// Implementations, one file each: H.264 (libx264), VP9 (libvpx), AV1 (SVT-AV1). An encoder belongs
// to one thread at a time.
#include <memory>
#include <string>

#include "common/video/video_codec.h"
#include "common/video/yuv_image.h"

namespace tessera::video {

struct EncoderSettings {
  int width = 0, height = 0;  // even
  double bitrate_mbit = 30;   // the target rate at `fps` frames a second
  double fps = 60;            // frames a second the rate is spread over
  unsigned threads = 0;       // 0: one per hardware thread (at most 16)
  std::string h264_preset = "superfast";  // x264's preset (with tune zerolatency); "ultrafast" trades CABAC and quality for speed
};

struct EncodedFrame {
  std::string bytes;  // H.264: Annex B access unit; VP9: one frame; AV1: one temporal unit
  bool key = false;
};

class VideoEncoder {
 public:
  virtual ~VideoEncoder() = default;
  // `picture` must have the settings' size (Error otherwise). `key`: this frame is a key frame.
  virtual EncodedFrame encode(const I420Image& picture, bool key) = 0;
  // The target from the next frame on. An encoder that cannot change it while running (SVT-AV1
  // 1.4) applies it at its next key frame; applies_rate_at_once() says which.
  virtual void set_bitrate(double mbit) = 0;
  virtual bool applies_rate_at_once() const { return true; }
  virtual Codec codec() const = 0;
  const EncoderSettings& settings() const { return settings_; }

 protected:
  explicit VideoEncoder(EncoderSettings settings) : settings_(settings) {}
  EncoderSettings settings_;
};

// Throws Error when the library refuses the settings.
std::unique_ptr<VideoEncoder> make_video_encoder(Codec codec, const EncoderSettings& settings);
std::unique_ptr<VideoEncoder> make_h264_encoder(const EncoderSettings& settings);
std::unique_ptr<VideoEncoder> make_vp9_encoder(const EncoderSettings& settings);
std::unique_ptr<VideoEncoder> make_av1_encoder(const EncoderSettings& settings);

unsigned encoder_threads(unsigned asked);  // 0: one per hardware thread, at most 16

}  // namespace tessera::video
