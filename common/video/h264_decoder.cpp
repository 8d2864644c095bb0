// H.264 decoding with openh264 (its decoder takes the High profile's CABAC and 8x8 transform; no
// interlace, which the encoder never writes). Annex B access units in, I420 out, no delay.
#include <wels/codec_api.h>

#include "common/base/error.h"
#include "common/video/video_decoder.h"

namespace tessera::video {
namespace {

class H264Decoder final : public VideoDecoder {
 public:
  H264Decoder() {
    if (WelsCreateDecoder(&decoder_) != 0 || !decoder_) throw Error("openh264: cannot create a decoder");
    SDecodingParam param{};
    param.sVideoProperty.eVideoBsType = VIDEO_BITSTREAM_AVC;
    param.uiTargetDqLayer = 0xff;  // every layer (an AVC stream has one)
    param.eEcActiveIdc = ERROR_CON_DISABLE;  // a broken frame is an error (the client asks for a key frame), not concealed
    if (decoder_->Initialize(&param) != 0) throw Error("openh264: cannot initialise the decoder");
  }
  ~H264Decoder() override {
    decoder_->Uninitialize();
    WelsDestroyDecoder(decoder_);
  }

  I420Image decode(const std::string& frame) override {
    unsigned char* planes[3] = {nullptr, nullptr, nullptr};
    SBufferInfo info{};
    const DECODING_STATE state = decoder_->DecodeFrameNoDelay(reinterpret_cast<const unsigned char*>(frame.data()), int(frame.size()), planes, &info);
    if (state != dsErrorFree) throw Error("h264: the frame does not decode (state " + std::to_string(int(state)) + ")");
    // openh264 keeps a High profile picture back for reordering (as if B-frames could follow); the
    // stream has none, so the picture held is this frame's: flush it out.
    if (info.iBufferStatus != 1) decoder_->FlushFrame(planes, &info);
    if (info.iBufferStatus != 1) throw Error("h264: the frame gave no picture");
    const auto& b = info.UsrData.sSystemBuffer;
    return copy_planes(b.iWidth, b.iHeight, planes[0], b.iStride[0], planes[1], b.iStride[1], planes[2], b.iStride[1]);
  }
  Codec codec() const override { return Codec::h264; }

 private:
  ISVCDecoder* decoder_ = nullptr;
};

}  // namespace

std::unique_ptr<VideoDecoder> make_h264_decoder(unsigned) { return std::make_unique<H264Decoder>(); }

}  // namespace tessera::video
