#pragma once
// Decodes one stream of encoded frames (video_encoder.h) back into pictures, one picture per
// frame: for tessera-live-client and the tests (a page decodes with WebCodecs). Implementations:
// H.264 (openh264), VP9 (libvpx), AV1 (dav1d). A decoder belongs to one thread at a time.
#include <memory>
#include <string>

#include "common/video/video_codec.h"
#include "common/video/yuv_image.h"

namespace tessera::video {

class VideoDecoder {
 public:
  virtual ~VideoDecoder() = default;
  // Throws Error when the frame does not decode (the stream needs a key frame to go on) or
  // yields no picture.
  virtual I420Image decode(const std::string& frame) = 0;
  virtual Codec codec() const = 0;
};

std::unique_ptr<VideoDecoder> make_video_decoder(Codec codec, unsigned threads = 0);
std::unique_ptr<VideoDecoder> make_h264_decoder(unsigned threads);
std::unique_ptr<VideoDecoder> make_vp9_decoder(unsigned threads);
std::unique_ptr<VideoDecoder> make_av1_decoder(unsigned threads);

}  // namespace tessera::video
