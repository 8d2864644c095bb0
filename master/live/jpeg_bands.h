#pragma once
// A live frame as horizontal JPEG bands, encoded and decoded in parallel (master/web/PROTOCOL.md,
// frame format 2). One JPEG of a 2048x1024 frame takes ~12 ms on one core; bands of 128+ rows on
// as many cores divide that. Bands start on multiples of 16 rows, the 4:2:0 MCU height, so each
// band's blocks are the whole frame's blocks: the bands join without a seam in the coefficients
// (a decoder's smooth chroma upsampling still sees the band's edge: the two rows next to it may
// differ by a few levels from one JPEG's decode).
#include <memory>
#include <string>
#include <vector>

#include "common/base/task_pool.h"
#include "common/image/image.h"
#include "master/live/jpeg_codec.h"

namespace tessera::master::live {

struct JpegBand {
  int y = 0, height = 0;  // rows [y, y + height) of the frame
  std::string jpeg;
  friend bool operator==(const JpegBand&, const JpegBand&) = default;
};

struct BandRows {
  int y = 0, height = 0;
  friend bool operator==(const BandRows&, const BandRows&) = default;
};
constexpr int kJpegBandAlign = 16;     // 4:2:0 MCU rows
constexpr int kJpegBandMinRows = 128;  // smaller bands cost more in headers and thread hand-offs than they save
// Bands for a frame of `height` rows: at most `max_bands` (at least one), each of at least
// kJpegBandMinRows rows where the height allows, all but the last a multiple of kJpegBandAlign.
std::vector<BandRows> plan_jpeg_bands(int height, unsigned max_bands);

// Encodes frames as bands on `max_bands` threads (the calling thread and a pool of max_bands - 1),
// one TurboJPEG handle each. Belongs to one thread.
class BandedJpegEncoder {
 public:
  // quality 1..100 (Error outside); max_bands 0: one per hardware thread.
  BandedJpegEncoder(int quality, unsigned max_bands = 0);
  std::vector<JpegBand> encode(const ImageRgba8& image);
  unsigned max_bands() const { return unsigned(encoders_.size()); }

 private:
  std::vector<std::unique_ptr<JpegEncoder>> encoders_;  // band i of a frame: encoders_[i]
  std::unique_ptr<TaskPool> pool_;
};

// Decodes bands into one frame of `width` x `height` on `threads` threads (the calling one and a
// pool). Belongs to one thread. decode() throws Error when the bands do not tile the frame
// (in order, no gaps or overlaps) or one does not decode.
class BandedJpegDecoder {
 public:
  explicit BandedJpegDecoder(unsigned threads = 0);  // 0: one per hardware thread
  ImageRgba8 decode(const std::vector<JpegBand>& bands, int width, int height);

 private:
  unsigned threads_;
  std::unique_ptr<TaskPool> pool_;
};

// Throws Error unless `bands` cover rows [0, height) in order without gaps or overlaps.
void check_band_layout(const std::vector<JpegBand>& bands, int height);

}  // namespace tessera::master::live
