#include "common/video/video_strips.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/base/error.h"
#include "common/base/pool_parallel.h"

namespace tessera::video {
namespace {

constexpr int kStripAlign = 16;      // a macroblock row (H.264) and a VP9/AV1 block row
constexpr int kRowsPerStrip = 128;   // below this a strip's bytes go mostly to headers and edges
constexpr int kMaxStrips = 16;
constexpr size_t kMaxTableStrips = 64;

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The rows of `picture` as a picture of their own (chroma rows halved: the strip's y is even).
I420Image cut(const I420Image& picture, StripRows rows) {
  I420Image strip(picture.width, rows.height);
  std::memcpy(strip.y.data(), picture.y.data() + size_t(rows.y) * size_t(picture.width), strip.y.size());
  const size_t chroma_offset = size_t(rows.y / 2) * size_t(picture.chroma_width());
  std::memcpy(strip.u.data(), picture.u.data() + chroma_offset, strip.u.size());
  std::memcpy(strip.v.data(), picture.v.data() + chroma_offset, strip.v.size());
  return strip;
}

void paste(I420Image& picture, const I420Image& strip, StripRows rows) {
  std::memcpy(picture.y.data() + size_t(rows.y) * size_t(picture.width), strip.y.data(), strip.y.size());
  const size_t chroma_offset = size_t(rows.y / 2) * size_t(picture.chroma_width());
  std::memcpy(picture.u.data() + chroma_offset, strip.u.data(), strip.u.size());
  std::memcpy(picture.v.data() + chroma_offset, strip.v.data(), strip.v.size());
}

double area_share(const std::vector<StripRows>& layout, size_t i, int height) { return double(layout[i].height) / double(height); }

}  // namespace

std::vector<StripRows> strip_layout(int height, int count) {
  if (height <= 0 || height % 2) throw Error("strips: the picture's height must be even and positive");
  count = std::clamp(count, 1, kMaxStrips);
  const int per_strip = (height / count + kStripAlign - 1) / kStripAlign * kStripAlign;
  std::vector<StripRows> layout;
  for (int y = 0; y < height; y += per_strip) layout.push_back({y, std::min(per_strip, height - y)});
  return layout;
}

int strip_count_for(int height, unsigned cores) {
  return std::clamp(std::min(height / kRowsPerStrip, int(std::min(cores, unsigned(kMaxStrips)))), 1, kMaxStrips);
}

StripEncoder::StripEncoder(Codec codec, const EncoderSettings& settings, int strips, TaskPool& pool)
    : codec_(codec), settings_(settings), layout_(strip_layout(settings.height, strips)), pool_(pool) {
  for (size_t i = 0; i < layout_.size(); ++i) {
    EncoderSettings strip = settings;
    strip.height = layout_[i].height;
    strip.bitrate_mbit = settings.bitrate_mbit * area_share(layout_, i, settings.height);
    encoders_.push_back(make_video_encoder(codec, strip));
  }
}

StripFrame StripEncoder::encode(const I420Image& picture, bool key) {
  if (picture.width != settings_.width || picture.height != settings_.height) throw Error("strips: picture size differs from the encoder's");
  std::vector<EncodedFrame> encoded(layout_.size());
  StripFrame frame;
  frame.strip_encode_ms.assign(layout_.size(), 0);
  run_on_pool(pool_, layout_.size(), [&](size_t i) {
    const auto start = std::chrono::steady_clock::now();
    encoded[i] = encoders_[i]->encode(cut(picture, layout_[i]), key);
    frame.strip_encode_ms[i] = ms_since(start);
  });
  frame.key = true;
  for (size_t i = 0; i < layout_.size(); ++i) {
    frame.strips.push_back({layout_[i], frame.bytes.size(), encoded[i].bytes.size(), encoded[i].key});
    frame.bytes += encoded[i].bytes;
    frame.key = frame.key && encoded[i].key;
  }
  return frame;
}

void StripEncoder::set_bitrate(double mbit) {
  settings_.bitrate_mbit = mbit;
  for (size_t i = 0; i < layout_.size(); ++i) encoders_[i]->set_bitrate(mbit * area_share(layout_, i, settings_.height));
}

std::optional<std::string> strip_table_error(const std::vector<EncodedStrip>& strips, int coded_height, size_t video_bytes) {
  if (strips.empty() || strips.size() > kMaxTableStrips) return "strips: between 1 and 64 strips, not " + std::to_string(strips.size());
  int row = 0;
  size_t offset = 0;
  for (size_t i = 0; i < strips.size(); ++i) {
    const EncodedStrip& s = strips[i];
    const std::string which = "strip " + std::to_string(i) + ": ";
    if (s.rows.y != row) return which + "starts at row " + std::to_string(s.rows.y) + ", not " + std::to_string(row);
    if (s.rows.height <= 0 || s.rows.height % 2) return which + "height " + std::to_string(s.rows.height) + " is not even and positive";
    if (i + 1 < strips.size() && s.rows.height % kStripAlign)
      return which + "height " + std::to_string(s.rows.height) + " is not a multiple of 16";
    if (s.offset != offset) return which + "bytes start at " + std::to_string(s.offset) + ", not " + std::to_string(offset);
    if (s.bytes == 0 || s.bytes > video_bytes - offset) return which + std::to_string(s.bytes) + " bytes do not fit the frame";
    row += s.rows.height;
    offset += s.bytes;
  }
  if (row != coded_height) return "strips cover " + std::to_string(row) + " rows, not " + std::to_string(coded_height);
  if (offset != video_bytes) return "strips hold " + std::to_string(offset) + " bytes, not " + std::to_string(video_bytes);
  return std::nullopt;
}

StripDecoder::StripDecoder(Codec codec, unsigned threads_per_strip, TaskPool& pool)
    : codec_(codec), threads_(threads_per_strip), pool_(pool) {}

void StripDecoder::reset() {
  decoders_.clear();
  layout_.clear();
}

I420Image StripDecoder::decode(const std::string& bytes, const std::vector<EncodedStrip>& strips, int width, int height) {
  bool same_layout = width == width_ && strips.size() == layout_.size();
  for (size_t i = 0; same_layout && i < strips.size(); ++i)
    same_layout = strips[i].rows.y == layout_[i].y && strips[i].rows.height == layout_[i].height;
  if (!same_layout) {
    decoders_.clear();
    layout_.clear();
    for (const EncodedStrip& s : strips) {
      layout_.push_back(s.rows);
      // A lone strip (a whole frame) is decoded by one decoder with the pool's threads.
      decoders_.push_back(make_video_decoder(codec_, strips.size() == 1 ? pool_.threads() : threads_));
    }
    width_ = width;
  }
  I420Image picture(width, height);
  strip_decode_ms.assign(strips.size(), 0);
  run_on_pool(pool_, strips.size(), [&](size_t i) {
    const auto start = std::chrono::steady_clock::now();
    const I420Image strip = decoders_[i]->decode(bytes.substr(strips[i].offset, strips[i].bytes));
    strip_decode_ms[i] = ms_since(start);
    if (strip.width != width || strip.height != strips[i].rows.height)
      throw Error("strip " + std::to_string(i) + " decoded to " + std::to_string(strip.width) + "x" + std::to_string(strip.height) + ", not " +
                  std::to_string(width) + "x" + std::to_string(strips[i].rows.height));
    paste(picture, strip, strips[i].rows);
  });
  return picture;
}

}  // namespace tessera::video
