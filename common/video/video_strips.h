#pragma once
// Strip-parallel video (master/web/PROTOCOL.md, "Video streams"): a picture cut into horizontal
// strips, each strip its own independent stream with its own encoder (and, on the receiving side,
// its own decoder), so a frame's strips encode and decode in parallel with one-threaded codecs,
// which beat one many-threaded codec on a whole frame for latency. A frame's strips travel in one
// message; a key frame is a key frame in every strip (a keyframe request resets all of them).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/base/task_pool.h"
#include "common/video/video_decoder.h"
#include "common/video/video_encoder.h"

namespace tessera::video {

struct StripRows {
  int y = 0, height = 0;  // luma rows of the picture
};

// The strips of a picture `height` rows tall: at most `count` strips, each a multiple of 16 rows
// (a macroblock/superblock row) but the last, which takes the rest (even). Fewer when the picture
// is short.
std::vector<StripRows> strip_layout(int height, int count);
// How many strips a stream of `height` rows uses on a host with `cores` threads: one per 128 rows,
// at most the cores and at most 16, at least one.
int strip_count_for(int height, unsigned cores);

// One encoded strip in a frame message: its rows, and where its bytes lie in the video bytes.
struct EncodedStrip {
  StripRows rows;
  size_t offset = 0, bytes = 0;
  bool key = false;
};

struct StripFrame {
  std::string bytes;  // every strip's encoded bytes, one after another
  std::vector<EncodedStrip> strips;
  bool key = false;   // every strip is a key frame
  std::vector<double> strip_encode_ms;  // each strip's own encode time (conversion excluded)
};

class StripEncoder {
 public:
  // `settings.threads`: threads each strip's encoder uses (1 is the point). Throws Error when an
  // encoder refuses its settings.
  StripEncoder(Codec codec, const EncoderSettings& settings, int strips, TaskPool& pool);
  StripFrame encode(const I420Image& picture, bool key);
  // The frame's rate, split among the strips by their area.
  void set_bitrate(double mbit);
  const std::vector<StripRows>& layout() const { return layout_; }
  Codec codec() const { return codec_; }

 private:
  Codec codec_;
  EncoderSettings settings_;
  std::vector<StripRows> layout_;
  std::vector<std::unique_ptr<VideoEncoder>> encoders_;
  TaskPool& pool_;
};

// The strip table of a frame message's header, checked against the frame: strips in order from
// row 0 covering all `coded_height` rows (each even, each but the last a multiple of 16), their
// bytes in order from offset 0 covering all `video_bytes`, each non-empty, at most 64 strips.
// Returns the reason when it is not.
std::optional<std::string> strip_table_error(const std::vector<EncodedStrip>& strips, int coded_height, size_t video_bytes);

class StripDecoder {
 public:
  // `threads_per_strip`: each strip's decoder's threads when there are several (a lone strip gets
  // the pool's thread count).
  StripDecoder(Codec codec, unsigned threads_per_strip, TaskPool& pool);
  // Decodes every strip (in parallel) into one picture `width` x `height`. The table must have
  // passed strip_table_error. A new layout (size or strips) restarts the decoders, which then
  // need key frames. Throws Error when a strip does not decode or its picture has the wrong size.
  I420Image decode(const std::string& bytes, const std::vector<EncodedStrip>& strips, int width, int height);
  void reset();  // forget every strip's references (the stream needs a key frame)
  std::vector<double> strip_decode_ms;  // the last frame's per-strip decode times

 private:
  Codec codec_;
  unsigned threads_;
  TaskPool& pool_;
  std::vector<StripRows> layout_;
  int width_ = 0;
  std::vector<std::unique_ptr<VideoDecoder>> decoders_;
};

}  // namespace tessera::video
