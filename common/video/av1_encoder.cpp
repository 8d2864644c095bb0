// AV1 with SVT-AV1 (Main profile, 8 bits: codec string av01.0.13M.08) in its low-delay
// prediction structure (each picture refers only to earlier ones), no look-ahead, no scene-change
// key frames and no periodic ones, CBR. SVT-AV1 runs a pipeline of threads: a picture goes in and
// its packet is collected when it comes out (it blocks until then, so one frame in is one frame
// out). SVT-AV1 1.4's low-delay mode holds one picture back: a picture's packet comes out only when
// the next picture goes in. So each picture goes in twice: the repeat pushes the picture out at
// once. With two hierarchical levels every second picture - the repeat - is a non-reference
// picture: its packet, out with the next picture, is dropped (no later frame refers to it); were
// it ever a reference, the encoder fails and the stream starts afresh with a key frame. The repeat
// costs encoder time, little (nothing moved). SVT-AV1 1.4 forces key frames only in its random-access mode with CRF/CQP, and cannot
// change the bitrate of a running encoder: a key frame is asked for by opening the encoder afresh
// (its first picture is a key frame with the sequence header), and a new target takes effect
// there. 1.4 calls its low-delay mode a work in progress; it encodes correct streams.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

#include <svt-av1/EbSvtAv1Enc.h>

#include "common/base/error.h"
#include "common/video/video_encoder.h"

namespace tessera::video {
namespace {

constexpr int kPreset = 12;  // of 0 (slowest) .. 13 (fastest)
constexpr auto kPacketTimeout = std::chrono::seconds(10);

class Av1Encoder final : public VideoEncoder {
 public:
  explicit Av1Encoder(const EncoderSettings& s) : VideoEncoder(s) { open(); }
  ~Av1Encoder() override { close(); }

  EncodedFrame encode(const I420Image& p, bool key) override {
    if (p.width != settings_.width || p.height != settings_.height) throw Error("av1: picture size differs from the encoder's");
    if (key && !first_) {  // a fresh encoder's first picture is a key frame; it takes the new target too
      close();
      open();
    }
    const bool repeat_pending = !first_;
    send(p);
    if (repeat_pending && receive().second != EB_AV1_NON_REF_PICTURE)  // the previous picture's repeat
      throw Error("SVT-AV1: a repeated picture came out as a reference picture");
    send(p);  // the repeat: pushes this picture out
    auto [bytes, type] = receive();
    EncodedFrame frame;
    frame.bytes = std::move(bytes);
    frame.key = type == EB_AV1_KEY_PICTURE;
    return frame;
  }

  void set_bitrate(double mbit) override {
    if (mbit == settings_.bitrate_mbit) return;
    settings_.bitrate_mbit = mbit;  // from the next key frame
  }
  bool applies_rate_at_once() const override { return false; }
  Codec codec() const override { return Codec::av1; }

 private:
  void open() {
    // SVT-AV1 prints its banner and notes on stderr at every open (each key frame here): errors only,
    // unless the user set SVT_LOG.
    setenv("SVT_LOG", "1", 0);
    EbSvtAv1EncConfiguration c{};
    if (svt_av1_enc_init_handle(&handle_, nullptr, &c) != EB_ErrorNone) throw Error("SVT-AV1: cannot create an encoder");
    c.enc_mode = kPreset;
    c.source_width = uint32_t(settings_.width);
    c.source_height = uint32_t(settings_.height);
    c.frame_rate_numerator = uint32_t(settings_.fps * 1000);
    c.frame_rate_denominator = 1000;
    c.encoder_bit_depth = 8;
    c.encoder_color_format = EB_YUV420;
    c.pred_structure = SVT_AV1_PRED_LOW_DELAY_B;
    c.hierarchical_levels = 1;  // pairs: a reference picture, then a non-reference one (the repeat)
    c.intra_period_length = -1;  // no periodic key frames
    c.intra_refresh_type = SVT_AV1_KF_REFRESH;
    c.scene_change_detection = 0;
    c.look_ahead_distance = 0;
    c.enable_tpl_la = 0;
    c.rate_control_mode = SVT_AV1_RC_MODE_CBR;
    c.target_bit_rate = uint32_t(std::max(0.1, settings_.bitrate_mbit) * 1e6);
    c.starting_buffer_level_ms = 50;
    c.optimal_buffer_level_ms = 50;
    c.maximum_buffer_size_ms = 100;
    c.logical_processors = encoder_threads(settings_.threads);
    c.color_primaries = EB_CICP_CP_BT_709;
    c.transfer_characteristics = EB_CICP_TC_SRGB;
    c.matrix_coefficients = EB_CICP_MC_BT_709;
    c.color_range = EB_CR_STUDIO_RANGE;
    if (svt_av1_enc_set_parameter(handle_, &c) != EB_ErrorNone || svt_av1_enc_init(handle_) != EB_ErrorNone) {
      svt_av1_enc_deinit_handle(handle_);
      handle_ = nullptr;
      throw Error("SVT-AV1: the encoder refused the settings (" + std::to_string(settings_.width) + "x" + std::to_string(settings_.height) + ")");
    }
    first_ = true;
  }
  void send(const I420Image& p) {
    EbSvtIOFormat planes{};
    planes.luma = const_cast<uint8_t*>(p.y.data());
    planes.cb = const_cast<uint8_t*>(p.u.data());
    planes.cr = const_cast<uint8_t*>(p.v.data());
    planes.y_stride = uint32_t(p.width);
    planes.cb_stride = planes.cr_stride = uint32_t(p.width / 2);
    EbBufferHeaderType in{};
    in.size = sizeof(in);
    in.p_buffer = reinterpret_cast<uint8_t*>(&planes);
    in.n_filled_len = uint32_t(p.y.size() + p.u.size() + p.v.size());
    in.pts = pts_++;
    in.pic_type = EB_AV1_INVALID_PICTURE;  // the encoder decides: a key frame first, then inter frames
    first_ = false;
    if (svt_av1_enc_send_picture(handle_, &in) != EB_ErrorNone) throw Error("SVT-AV1: the encoder refused a picture");
  }

  // The next packet out and its picture type (waits for it).
  std::pair<std::string, EbAv1PictureType> receive() {
    const auto until = std::chrono::steady_clock::now() + kPacketTimeout;
    for (;;) {
      EbBufferHeaderType* out = nullptr;
      const EbErrorType result = svt_av1_enc_get_packet(handle_, &out, 0);
      if (result == EB_ErrorNone && out) {
        std::pair<std::string, EbAv1PictureType> packet{std::string(reinterpret_cast<const char*>(out->p_buffer), out->n_filled_len),
                                                        out->pic_type};
        svt_av1_enc_release_out_buffer(&out);
        return packet;
      }
      if (result != EB_NoErrorEmptyQueue) throw Error("SVT-AV1: encoding failed");
      if (std::chrono::steady_clock::now() > until) throw Error("SVT-AV1: no packet out for a picture in");
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  void close() {
    if (!handle_) return;
    if (!first_) {  // end the stream and take what it still holds, as SVT-AV1 expects before deinit
      EbBufferHeaderType eos{};
      eos.size = sizeof(eos);
      eos.flags = EB_BUFFERFLAG_EOS;
      if (svt_av1_enc_send_picture(handle_, &eos) == EB_ErrorNone)
        for (int i = 0; i < 16; ++i) {
          EbBufferHeaderType* out = nullptr;
          if (svt_av1_enc_get_packet(handle_, &out, 1) != EB_ErrorNone || !out) break;
          const bool last = out->flags & EB_BUFFERFLAG_EOS;
          svt_av1_enc_release_out_buffer(&out);
          if (last) break;
        }
    }
    svt_av1_enc_deinit(handle_);
    svt_av1_enc_deinit_handle(handle_);
    handle_ = nullptr;
  }

  EbComponentType* handle_ = nullptr;
  int64_t pts_ = 0;
  bool first_ = true;  // no picture sent to this encoder yet
};

}  // namespace

std::unique_ptr<VideoEncoder> make_av1_encoder(const EncoderSettings& settings) { return std::make_unique<Av1Encoder>(settings); }

}  // namespace tessera::video
