#include <algorithm>
#include <thread>

#include "common/video/video_decoder.h"
#include "common/video/video_encoder.h"

namespace tessera::video {

unsigned encoder_threads(unsigned asked) {
  if (asked) return asked;
  return std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
}

std::unique_ptr<VideoEncoder> make_video_encoder(Codec codec, const EncoderSettings& settings) {
  switch (codec) {
    case Codec::h264: return make_h264_encoder(settings);
    case Codec::vp9: return make_vp9_encoder(settings);
    case Codec::av1: return make_av1_encoder(settings);
  }
  return nullptr;
}

std::unique_ptr<VideoDecoder> make_video_decoder(Codec codec, unsigned threads) {
  switch (codec) {
    case Codec::h264: return make_h264_decoder(threads);
    case Codec::vp9: return make_vp9_decoder(threads);
    case Codec::av1: return make_av1_decoder(threads);
  }
  return nullptr;
}

}  // namespace tessera::video
