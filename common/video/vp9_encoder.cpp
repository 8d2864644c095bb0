// VP9 with libvpx: profile 0, 8 bits (codec string vp09.00.51.08), real-time: speed 8, row-based
// multithreading over tile columns, no lag (one frame in, one out), no error resilience (a page
// asks for a key frame instead), key frames only when asked, CBR with a buffer of a tenth of a
// second. The colour space is signalled as BT.709, limited range.
#include <algorithm>
#include <cmath>

#include <vpx/vp8cx.h>
#include <vpx/vpx_encoder.h>

#include "common/base/error.h"
#include "common/video/video_encoder.h"

namespace tessera::video {
namespace {

constexpr int kSpeed = 8;
constexpr unsigned kBufferMs = 100;

class Vp9Encoder final : public VideoEncoder {
 public:
  explicit Vp9Encoder(const EncoderSettings& s) : VideoEncoder(s) {
    if (vpx_codec_enc_config_default(vpx_codec_vp9_cx(), &config_, 0)) throw Error("libvpx: no VP9 encoder");
    config_.g_w = unsigned(s.width);
    config_.g_h = unsigned(s.height);
    config_.g_threads = encoder_threads(s.threads);
    config_.g_timebase = {1, 1000};
    config_.g_lag_in_frames = 0;
    config_.g_error_resilient = 0;
    config_.g_pass = VPX_RC_ONE_PASS;
    config_.rc_end_usage = VPX_CBR;
    config_.rc_target_bitrate = kbit(s.bitrate_mbit);
    config_.rc_min_quantizer = 2;
    config_.rc_max_quantizer = 56;
    config_.rc_undershoot_pct = 50;
    config_.rc_overshoot_pct = 50;
    config_.rc_buf_initial_sz = kBufferMs / 2;
    config_.rc_buf_optimal_sz = kBufferMs / 2;
    config_.rc_buf_sz = kBufferMs;
    config_.rc_dropframe_thresh = 0;  // every frame comes out
    config_.kf_mode = VPX_KF_DISABLED;
    if (vpx_codec_enc_init(&codec_, vpx_codec_vp9_cx(), &config_, 0))
      throw Error(std::string("libvpx: cannot open a VP9 encoder: ") + vpx_codec_error(&codec_));
    // Tile columns (log2): as many as VP9 allows (each at least 256 pixels wide), up to 16, whatever
    // the master's threads: the decoder's threads (a headset's, a page's) work on them in parallel.
    int tiles = 0;
    while (tiles < 4 && (s.width >> (tiles + 1)) >= 256) ++tiles;
    control(VP8E_SET_CPUUSED, kSpeed);
    control(VP9E_SET_ROW_MT, 1);
    control(VP9E_SET_TILE_COLUMNS, tiles);
    control(VP9E_SET_AQ_MODE, 3);  // cyclic refresh: the real-time mode's quality spread
    control(VP9E_SET_NOISE_SENSITIVITY, 0);
    control(VP8E_SET_MAX_INTRA_BITRATE_PCT, 600);  // a key frame: up to six frames' budget
    control(VP9E_SET_COLOR_SPACE, VPX_CS_BT_709);
    control(VP9E_SET_COLOR_RANGE, VPX_CR_STUDIO_RANGE);
  }
  ~Vp9Encoder() override { vpx_codec_destroy(&codec_); }

  EncodedFrame encode(const I420Image& p, bool key) override {
    if (p.width != settings_.width || p.height != settings_.height) throw Error("vp9: picture size differs from the encoder's");
    vpx_image_t image;
    vpx_img_wrap(&image, VPX_IMG_FMT_I420, unsigned(p.width), unsigned(p.height), 1, const_cast<uint8_t*>(p.y.data()));
    image.planes[VPX_PLANE_Y] = const_cast<uint8_t*>(p.y.data());
    image.planes[VPX_PLANE_U] = const_cast<uint8_t*>(p.u.data());
    image.planes[VPX_PLANE_V] = const_cast<uint8_t*>(p.v.data());
    image.stride[VPX_PLANE_Y] = p.width;
    image.stride[VPX_PLANE_U] = image.stride[VPX_PLANE_V] = p.width / 2;
    const vpx_codec_pts_t pts = vpx_codec_pts_t(std::lround(double(frames_++) * 1000.0 / settings_.fps));
    const unsigned long duration = std::max(1ul, (unsigned long)std::lround(1000.0 / settings_.fps));
    if (vpx_codec_encode(&codec_, &image, pts, duration, key ? VPX_EFLAG_FORCE_KF : 0, VPX_DL_REALTIME))
      throw Error(std::string("libvpx: encoding failed: ") + vpx_codec_error(&codec_));
    EncodedFrame frame;
    vpx_codec_iter_t iter = nullptr;
    while (const vpx_codec_cx_pkt_t* packet = vpx_codec_get_cx_data(&codec_, &iter)) {
      if (packet->kind != VPX_CODEC_CX_FRAME_PKT) continue;
      frame.bytes.append(static_cast<const char*>(packet->data.frame.buf), packet->data.frame.sz);
      frame.key = frame.key || (packet->data.frame.flags & VPX_FRAME_IS_KEY);
    }
    if (frame.bytes.empty()) throw Error("libvpx: no frame out for a frame in");
    return frame;
  }

  void set_bitrate(double mbit) override {
    if (mbit == settings_.bitrate_mbit) return;
    settings_.bitrate_mbit = mbit;
    config_.rc_target_bitrate = kbit(mbit);
    if (vpx_codec_enc_config_set(&codec_, &config_)) throw Error(std::string("libvpx: cannot change the bitrate: ") + vpx_codec_error(&codec_));
  }
  Codec codec() const override { return Codec::vp9; }

 private:
  static unsigned kbit(double mbit) { return unsigned(std::max(100.0, mbit * 1000)); }
  template <typename T>
  void control(int id, T value) {
    if (vpx_codec_control_(&codec_, id, value)) throw Error(std::string("libvpx: VP9 control refused: ") + vpx_codec_error(&codec_));
  }

  vpx_codec_enc_cfg_t config_{};
  vpx_codec_ctx_t codec_{};
  int64_t frames_ = 0;
};

}  // namespace

std::unique_ptr<VideoEncoder> make_vp9_encoder(const EncoderSettings& settings) { return std::make_unique<Vp9Encoder>(settings); }

}  // namespace tessera::video
