#pragma once
// What a page does with frame messages, without a browser (tessera-live-client, the tests):
// JPEG bands decoded in parallel, or a video stream decoded frame by frame. A video stream that
// cannot go on (a frame does not decode, a gap in `seq`, a delta frame before any key frame)
// yields no picture and a reason for a `keyframe` request; its frames are skipped until a key
// frame comes. A video frame's strips decode in parallel, one one-threaded decoder each; a
// malformed strip table is refused (an event and a key frame request), never decoded.
#include <memory>
#include <optional>
#include <string>

#include "common/image/image.h"
#include "common/base/task_pool.h"
#include "common/video/video_strips.h"
#include "master/live/frame_message.h"
#include "master/live/jpeg_bands.h"

namespace tessera::master::live {

class PageDecoder {
 public:
  explicit PageDecoder(unsigned threads = 0);

  struct Result {
    bool decoded = false;                        // the frame's picture was decoded
    std::optional<ImageRgba8> image;             // eyes*width x height RGBA (when asked for)
    std::optional<std::string> keyframe_reason;  // ask the master for a key frame, saying this
    std::optional<std::string> refused;          // the frame's header was malformed: this, once
  };
  // `want_image`: convert the picture to the frame's RGBA (a video picture stretched over it, as a
  // page draws it); otherwise only decode.
  Result decode(const FrameMessage& frame, bool want_image);
  const std::vector<double>& strip_decode_ms() const;  // the last video frame's, one a strip

 private:
  unsigned threads_;
  BandedJpegDecoder jpeg_;
  TaskPool strip_pool_;
  std::unique_ptr<video::StripDecoder> video_;
  video::Codec codec_ = video::Codec::h264;
  bool waiting_for_key_ = true;
  std::optional<uint64_t> last_seq_;
};

}  // namespace tessera::master::live
