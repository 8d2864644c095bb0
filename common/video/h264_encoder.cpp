// H.264 with libx264: High profile level 5.1 (codec string avc1.640033), Annex B with SPS/PPS before
// every key frame. Low latency as x264's "zerolatency" tune sets it (no B-frames, no look-ahead,
// sliced threads: one frame in, one out), no periodic key frames, and a VBV of a tenth of a second
// so one frame's bytes stay near the per-frame budget (a key frame may take a few frames' worth).
#include <algorithm>
#include <cstdint>
#include <cstring>

extern "C" {
#include <x264.h>
}

#include "common/base/error.h"
#include "common/video/video_encoder.h"

namespace tessera::video {
namespace {

constexpr double kVbvSeconds = 0.1;

class H264Encoder final : public VideoEncoder {
 public:
  explicit H264Encoder(const EncoderSettings& s) : VideoEncoder(s) {
    // superfast keeps CABAC and the 8x8 transform (High profile tools) and runs a 2048x1024 frame in
    // a few ms on a handful of cores.
    if (x264_param_default_preset(&param_, s.h264_preset.c_str(), "zerolatency") < 0)
      throw Error("x264: no preset '" + s.h264_preset + "'");
    param_.i_width = s.width;
    param_.i_height = s.height;
    param_.i_csp = X264_CSP_I420;
    param_.i_threads = int(encoder_threads(s.threads));
    param_.b_sliced_threads = 1;
    param_.i_bframe = 0;
    param_.rc.i_lookahead = 0;
    param_.i_sync_lookahead = 0;
    param_.i_keyint_max = X264_KEYINT_MAX_INFINITE;
    param_.i_keyint_min = 1;
    param_.b_intra_refresh = 0;
    param_.i_scenecut_threshold = 0;  // key frames only when asked
    param_.b_repeat_headers = 1;      // SPS/PPS before every key frame
    param_.b_annexb = 1;
    param_.i_level_idc = 51;
    param_.i_fps_num = uint32_t(s.fps * 1000);
    param_.i_fps_den = 1000;
    param_.b_vfr_input = 0;
    param_.i_log_level = X264_LOG_WARNING;
    param_.vui.i_colorprim = 1;   // BT.709
    param_.vui.i_transfer = 13;   // IEC 61966-2-1 (sRGB)
    param_.vui.i_colmatrix = 1;   // BT.709
    param_.vui.b_fullrange = 0;
    param_.rc.i_rc_method = X264_RC_ABR;
    rate(s.bitrate_mbit);
    if (x264_param_apply_profile(&param_, "high") < 0) throw Error("x264: the High profile is not available");
    encoder_ = x264_encoder_open(&param_);
    if (!encoder_) throw Error("x264: cannot open an encoder for " + std::to_string(s.width) + "x" + std::to_string(s.height));
  }
  ~H264Encoder() override { x264_encoder_close(encoder_); }

  EncodedFrame encode(const I420Image& p, bool key) override {
    if (p.width != settings_.width || p.height != settings_.height) throw Error("h264: picture size differs from the encoder's");
    x264_picture_t in, out;
    x264_picture_init(&in);
    in.img.i_csp = X264_CSP_I420;
    in.img.i_plane = 3;
    in.img.plane[0] = const_cast<uint8_t*>(p.y.data());
    in.img.plane[1] = const_cast<uint8_t*>(p.u.data());
    in.img.plane[2] = const_cast<uint8_t*>(p.v.data());
    in.img.i_stride[0] = p.width;
    in.img.i_stride[1] = in.img.i_stride[2] = p.width / 2;
    in.i_type = key ? X264_TYPE_IDR : X264_TYPE_AUTO;
    in.i_pts = pts_++;
    x264_nal_t* nals = nullptr;
    int count = 0;
    const int bytes = x264_encoder_encode(encoder_, &nals, &count, &in, &out);
    if (bytes < 0) throw Error("x264: encoding failed");
    EncodedFrame frame;
    if (bytes > 0) frame.bytes.assign(reinterpret_cast<const char*>(nals[0].p_payload), size_t(bytes));  // the NALs lie one after another
    frame.key = out.b_keyframe;
    if (bytes == 0) throw Error("x264: no frame out for a frame in");
    return frame;
  }

  void set_bitrate(double mbit) override {
    if (mbit == settings_.bitrate_mbit) return;
    settings_.bitrate_mbit = mbit;
    rate(mbit);
    if (x264_encoder_reconfig(encoder_, &param_) < 0) throw Error("x264: cannot change the bitrate");
  }
  Codec codec() const override { return Codec::h264; }

 private:
  void rate(double mbit) {
    const int kbit = std::max(100, int(mbit * 1000));
    param_.rc.i_bitrate = kbit;
    param_.rc.i_vbv_max_bitrate = kbit;
    param_.rc.i_vbv_buffer_size = std::max(1, int(kbit * kVbvSeconds));
  }

  x264_param_t param_{};
  x264_t* encoder_ = nullptr;
  int64_t pts_ = 0;
};

}  // namespace

std::unique_ptr<VideoEncoder> make_h264_encoder(const EncoderSettings& settings) { return std::make_unique<H264Encoder>(settings); }

}  // namespace tessera::video
