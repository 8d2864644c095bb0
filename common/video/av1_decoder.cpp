// AV1 decoding with dav1d, one temporal unit in, one picture out (frame delay 1: no frames held
// back for frame-parallel decoding).
#include <cerrno>
#include <cstring>

#include <dav1d/dav1d.h>

#include "common/base/error.h"
#include "common/video/video_decoder.h"
#include "common/video/video_encoder.h"

namespace tessera::video {
namespace {

class Av1Decoder final : public VideoDecoder {
 public:
  explicit Av1Decoder(unsigned threads) {
    Dav1dSettings settings;
    dav1d_default_settings(&settings);
    settings.n_threads = int(encoder_threads(threads));
    settings.max_frame_delay = 1;
    if (dav1d_open(&context_, &settings) < 0) throw Error("dav1d: cannot open a decoder");
  }
  ~Av1Decoder() override { dav1d_close(&context_); }

  I420Image decode(const std::string& frame) override {
    Dav1dData data{};
    uint8_t* bytes = dav1d_data_create(&data, frame.size());
    if (!bytes) throw Error("dav1d: out of memory");
    std::memcpy(bytes, frame.data(), frame.size());
    while (data.sz > 0) {
      const int sent = dav1d_send_data(context_, &data);
      if (sent < 0 && sent != DAV1D_ERR(EAGAIN)) {
        dav1d_data_unref(&data);
        throw Error("av1: the temporal unit does not decode (" + std::to_string(sent) + ")");
      }
      if (sent == DAV1D_ERR(EAGAIN)) break;  // a picture must come out first
    }
    Dav1dPicture picture{};
    int got = dav1d_get_picture(context_, &picture);
    if (data.sz > 0) {  // the rest of the unit, now that the picture left
      dav1d_send_data(context_, &data);
      dav1d_data_unref(&data);
    }
    if (got < 0) throw Error(got == DAV1D_ERR(EAGAIN) ? "av1: the temporal unit gave no picture" : "av1: the temporal unit does not decode");
    if (picture.p.layout != DAV1D_PIXEL_LAYOUT_I420 || picture.p.bpc != 8) {
      dav1d_picture_unref(&picture);
      throw Error("av1: the picture is not 8-bit 4:2:0");
    }
    I420Image out = copy_planes(picture.p.w, picture.p.h, static_cast<const uint8_t*>(picture.data[0]), int(picture.stride[0]),
                                static_cast<const uint8_t*>(picture.data[1]), int(picture.stride[1]),
                                static_cast<const uint8_t*>(picture.data[2]), int(picture.stride[1]));
    dav1d_picture_unref(&picture);
    return out;
  }
  Codec codec() const override { return Codec::av1; }

 private:
  Dav1dContext* context_ = nullptr;
};

}  // namespace

std::unique_ptr<VideoDecoder> make_av1_decoder(unsigned threads) { return std::make_unique<Av1Decoder>(threads); }

}  // namespace tessera::video
