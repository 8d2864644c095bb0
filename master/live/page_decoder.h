#pragma once
// What a page does with frame messages, without a browser (tessera-live-client, the tests):
// JPEG bands decoded in parallel, or a video stream decoded frame by frame. A video stream that
// cannot go on (a frame does not decode, a gap in `seq`, a delta frame before any key frame)
// yields no picture and a reason for a `keyframe` request; its frames are skipped until a key
// frame comes.
#include <memory>
#include <optional>
#include <string>

#include "common/image/image.h"
#include "common/video/video_decoder.h"
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
  };
  // `want_image`: convert the picture to the frame's RGBA (a video picture stretched over it, as a
  // page draws it); otherwise only decode.
  Result decode(const FrameMessage& frame, bool want_image);

 private:
  unsigned threads_;
  BandedJpegDecoder jpeg_;
  std::unique_ptr<video::VideoDecoder> video_;
  bool waiting_for_key_ = true;
  std::optional<uint64_t> last_seq_;
};

}  // namespace tessera::master::live
