#include "master/live/page_decoder.h"

#include "common/base/error.h"

namespace tessera::master::live {

PageDecoder::PageDecoder(unsigned threads) : threads_(threads), jpeg_(threads) {}

PageDecoder::Result PageDecoder::decode(const FrameMessage& frame, bool want_image) {
  Result result;
  if (!frame.video) {
    ImageRgba8 image = jpeg_.decode(frame.bands, frame.image_width(), frame.image_height());
    result.decoded = true;
    if (want_image) result.image = std::move(image);
    return result;
  }
  const auto& info = frame.header.at("video");
  const auto codec = video::parse_codec(info.value("codec", ""));
  if (!codec) throw Error("frame header: unknown video codec '" + info.value("codec", "") + "'");
  const bool key = info.value("key", false);
  const uint64_t seq = info.value("seq", uint64_t(0));
  if (!video_ || video_->codec() != *codec) {
    video_ = video::make_video_decoder(*codec, threads_);
    waiting_for_key_ = true;
  }
  if (!key) {
    if (waiting_for_key_) return result;  // asked already: the key frame is on its way
    if (!last_seq_ || seq != *last_seq_ + 1) {
      waiting_for_key_ = true;
      last_seq_.reset();
      result.keyframe_reason = "a gap in seq before " + std::to_string(seq);
      return result;
    }
  }
  try {
    const video::I420Image picture = video_->decode(*frame.video);
    waiting_for_key_ = false;
    last_seq_ = seq;
    result.decoded = true;
    if (want_image) result.image = video::i420_to_rgba_stretched(picture, frame.image_width(), frame.image_height());
  } catch (const Error& e) {
    video_ = video::make_video_decoder(*codec, threads_);  // a clean decoder for the key frame
    waiting_for_key_ = true;
    last_seq_.reset();
    result.keyframe_reason = std::string("decode error: ") + e.what();
  }
  return result;
}

}  // namespace tessera::master::live
