#include "master/live/page_decoder.h"

#include "common/base/error.h"

namespace tessera::master::live {
namespace {

// The header's strip table; a header without one (a master from before strips) is one strip.
std::vector<video::EncodedStrip> strips_of(const nlohmann::json& info, int coded_height, size_t bytes) {
  if (!info.contains("strips")) return {{{0, coded_height}, 0, bytes, info.value("key", false)}};
  const auto& table = info.at("strips");
  if (!table.is_array()) throw Error("strips is not an array");
  std::vector<video::EncodedStrip> strips;
  for (const auto& s : table) {
    if (!s.is_object()) throw Error("a strip is not an object");
    strips.push_back({{s.at("y").get<int>(), s.at("height").get<int>()}, s.at("offset").get<size_t>(), s.at("bytes").get<size_t>(),
                      s.at("key").get<bool>()});
  }
  return strips;
}

}  // namespace

PageDecoder::PageDecoder(unsigned threads) : threads_(threads), jpeg_(threads), strip_pool_(video::encoder_threads(threads)) {}

const std::vector<double>& PageDecoder::strip_decode_ms() const {
  static const std::vector<double> none;
  return video_ ? video_->strip_decode_ms : none;
}

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
  if (!video_ || codec_ != *codec) {
    video_ = std::make_unique<video::StripDecoder>(*codec, 1, strip_pool_);
    codec_ = *codec;
    waiting_for_key_ = true;
  }
  const int coded_width = info.value("coded_width", 0), coded_height = info.value("coded_height", 0);
  std::vector<video::EncodedStrip> strips;
  std::optional<std::string> table_error;
  try {
    strips = strips_of(info, coded_height, frame.video->size());
    if (coded_width <= 0 || coded_width % 2) table_error = "coded_width " + std::to_string(coded_width) + " is not even and positive";
    else table_error = video::strip_table_error(strips, coded_height, frame.video->size());
  } catch (const std::exception& e) {
    table_error = e.what();
  }
  if (table_error) {
    video_->reset();
    waiting_for_key_ = true;
    last_seq_.reset();
    result.refused = "strip table refused: " + *table_error;
    result.keyframe_reason = *result.refused;
    return result;
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
    const video::I420Image picture = video_->decode(*frame.video, strips, coded_width, coded_height);
    waiting_for_key_ = false;
    last_seq_ = seq;
    result.decoded = true;
    if (want_image) result.image = video::i420_to_rgba_stretched(picture, frame.image_width(), frame.image_height());
  } catch (const Error& e) {
    video_->reset();  // clean decoders for the key frame
    waiting_for_key_ = true;
    last_seq_.reset();
    result.keyframe_reason = std::string("decode error: ") + e.what();
  }
  return result;
}

}  // namespace tessera::master::live
