// VP9 decoding with libvpx: one frame in, one I420 picture out. Threads decode the tile columns
// (the encoder writes as many as the width allows) and their rows in parallel.
#include <vpx/vp8dx.h>
#include <vpx/vpx_decoder.h>

#include "common/base/error.h"
#include "common/video/video_decoder.h"
#include "common/video/video_encoder.h"

namespace tessera::video {
namespace {

class Vp9Decoder final : public VideoDecoder {
 public:
  explicit Vp9Decoder(unsigned threads) {
    vpx_codec_dec_cfg_t config{};
    config.threads = encoder_threads(threads);
    if (vpx_codec_dec_init(&codec_, vpx_codec_vp9_dx(), &config, 0)) throw Error("libvpx: cannot open a VP9 decoder");
    if (vpx_codec_control(&codec_, VP9D_SET_ROW_MT, 1))
      throw Error(std::string("libvpx: VP9 row threads refused: ") + vpx_codec_error(&codec_));
    vpx_codec_control(&codec_, VP9D_SET_LOOP_FILTER_OPT, 1);  // the faster loop filter where this libvpx has it
  }
  ~Vp9Decoder() override { vpx_codec_destroy(&codec_); }

  I420Image decode(const std::string& frame) override {
    if (vpx_codec_decode(&codec_, reinterpret_cast<const uint8_t*>(frame.data()), unsigned(frame.size()), nullptr, 0))
      throw Error(std::string("vp9: the frame does not decode: ") + vpx_codec_error(&codec_));
    vpx_codec_iter_t iter = nullptr;
    const vpx_image_t* image = vpx_codec_get_frame(&codec_, &iter);
    if (!image) throw Error("vp9: the frame gave no picture");
    if (image->fmt != VPX_IMG_FMT_I420) throw Error("vp9: the picture is not 8-bit 4:2:0");
    return copy_planes(int(image->d_w), int(image->d_h), image->planes[0], image->stride[0], image->planes[1], image->stride[1],
                       image->planes[2], image->stride[2]);
  }
  Codec codec() const override { return Codec::vp9; }

 private:
  vpx_codec_ctx_t codec_{};
};

}  // namespace

std::unique_ptr<VideoDecoder> make_vp9_decoder(unsigned threads) { return std::make_unique<Vp9Decoder>(threads); }

}  // namespace tessera::video
