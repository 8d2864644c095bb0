// Explicit eye views and anti-aliasing samples through a real tessera-worker on loopback: a
// frame with FrameRequest.eye_views is tessera-render --eye-view pixel for pixel (raytrace and
// pathtrace stereo, vct mono), aa_sample 0 is today's image, the master's SampleAccumulator over
// the frames of aa_sample 0..N-1 is tessera-render --aa N, and invalid eye views are refused with
// a clear error while the worker keeps serving.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "cluster_test_support.h"
#include "common/base/hash.h"
#include "common/image/metrics.h"
#include "common/render/camera_setup.h"
#include "master/frame/frame_assembler.h"
#include "master/frame/sample_accumulator.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
using testing::WorkerProcess;

constexpr const char* kSecret = testing::kClusterSecret;
// Two canted eyes in front of the Cornell box (turned 5 degrees outwards each), with asymmetric
// frusta as a headset reports them: px,py,pz,qw,qx,qy,qz,left,right,bottom,top.
constexpr const char* kLeftEye = "246,273,-800,-0.0436194,0,0.9990482,0,-0.45,0.35,-0.32,0.36";
constexpr const char* kRightEye = "310,273,-800,0.0436194,0,0.9990482,0,-0.35,0.45,-0.3,0.38";
constexpr uint32_t kWidth = 48, kHeight = 32, kTile = 16;  // 3 x 2 tiles per eye
constexpr const char* kSize = "48x32";

wire::EyeView wire_eye_view(const std::string& text) {
  const auto v = parse_floats(text, 11, "eye view");  // the numbers tessera-render parses
  wire::EyeView e;
  e.mutable_position()->set_x(v[0]);
  e.mutable_position()->set_y(v[1]);
  e.mutable_position()->set_z(v[2]);
  e.mutable_orientation()->set_w(v[3]);
  e.mutable_orientation()->set_x(v[4]);
  e.mutable_orientation()->set_y(v[5]);
  e.mutable_orientation()->set_z(v[6]);
  e.mutable_frustum()->set_left(v[7]);
  e.mutable_frustum()->set_right(v[8]);
  e.mutable_frustum()->set_bottom(v[9]);
  e.mutable_frustum()->set_top(v[10]);
  return e;
}

// One worker (host device, one thread) with the Cornell box loaded on a raw connection.
class EyeViewWorker {
 public:
  EyeViewWorker() {
    testing::write_secret(dir_ / "secret", kSecret);
    std::filesystem::create_directories(dir_ / "scenes");
    std::filesystem::copy_file(testing::cornell_tpk(), dir_ / "scenes" / "cornell.tpk");
    worker_ = std::make_unique<WorkerProcess>(dir_.path(), "w", dir_ / "scenes", dir_ / "secret");
    client_ = std::make_unique<testing::SealedClient>(worker_->port(), kSecret);
    if (!client_->ready()) throw std::runtime_error("no welcome: " + worker_->log());
    info_ = client_->info();
    const auto bytes = read_file_bytes(testing::cornell_tpk());
    scene_hash_ = hash64(bytes.data(), bytes.size());
    wire::Envelope load;
    load.mutable_load_scene()->set_content_hash(scene_hash_);
    client_->send(load);
    const auto status = client_->receive(30s);
    if (!status || !status->has_scene_status() || status->scene_status().state() != wire::SceneStatus::READY)
      throw std::runtime_error("scene not ready: " + worker_->log());
  }

  const wire::WorkerInfo& info() const { return info_; }
  // Frame ids are unique per connection.
  uint64_t next_id() { return ++last_id_; }
  std::string log() const { return worker_->log(); }
  const TempDir& dir() const { return dir_; }

  // A request of every tile of a kWidth x kHeight frame in one batch, as tessera-render's defaults:
  // raytrace with 6 bounces and 4 light samples, exposure 1. Its head pose is the scene's camera
  // (which explicit eye views override).
  wire::FrameRequest request(bool stereo) {
    wire::FrameRequest r;
    r.set_frame_id(next_id());
    r.set_scene_hash(scene_hash_);
    r.mutable_pose()->mutable_position()->set_x(278);
    r.mutable_pose()->mutable_position()->set_y(273);
    r.mutable_pose()->mutable_position()->set_z(-800);
    r.mutable_pose()->mutable_orientation()->set_y(1);
    r.mutable_eyes()->set_layout(stereo ? wire::Eyes::STEREO : wire::Eyes::MONO);
    r.mutable_eyes()->set_ipd(64);
    r.mutable_projection()->set_vertical_fov_degrees(40);
    r.mutable_image()->set_width(kWidth);
    r.mutable_image()->set_height(kHeight);
    r.mutable_image()->set_tile_size(kTile);
    r.set_reply(wire::BATCH);
    r.set_encoding(wire::RAW_RGBA8);
    r.mutable_raytrace()->set_max_depth(6);
    r.mutable_raytrace()->set_light_samples(4);
    r.mutable_raytrace()->set_exposure(1);
    const uint32_t eyes = stereo ? 2 : 1;
    // pathtrace names stereo tile pairs by their left id; the caller switches modes after this.
    for (uint32_t t = 0; t < net::TileGrid(kWidth, kHeight, kTile, eyes).tile_count(); ++t) r.add_tiles(t);
    return r;
  }
  static void stereo_eye_views(wire::FrameRequest& r) {
    r.clear_eye_views();
    *r.add_eye_views() = wire_eye_view(kLeftEye);
    *r.add_eye_views() = wire_eye_view(kRightEye);
  }
  static void use_pathtrace(wire::FrameRequest& r, uint32_t spp) {
    r.mutable_pathtrace()->set_spp(spp);
    r.mutable_pathtrace()->set_exposure(1);
    const uint32_t pairs = net::TileGrid(kWidth, kHeight, kTile, 1).tile_count();
    r.clear_tiles();
    for (uint32_t t = 0; t < pairs; ++t) r.add_tiles(t);
  }

  // The composited frame (stereo: side by side), or the worker's error message.
  struct Answer {
    std::optional<ImageRgba8> image;
    std::string error;
    bool fatal = false;
  };
  Answer render(const wire::FrameRequest& request) {
    wire::Envelope m;
    *m.mutable_frame_request() = request;
    client_->send(m);
    const uint32_t eyes = request.eyes().layout() == wire::Eyes::STEREO ? 2 : 1;
    master::FrameAssembler frame(net::TileGrid(kWidth, kHeight, kTile, eyes));
    Answer answer;
    while (!frame.complete()) {
      const auto reply = client_->receive(60s);
      if (!reply) {
        answer.error = "no answer";
        return answer;
      }
      if (reply->has_error()) {
        answer.error = reply->error().message();
        answer.fatal = reply->error().fatal();
        return answer;
      }
      if (!reply->has_tile_batch() || reply->tile_batch().frame_id() != request.frame_id()) continue;
      for (const auto& tile : reply->tile_batch().tiles()) frame.add(tile, 0);
    }
    answer.image = frame.take_image();
    return answer;
  }
  ImageRgba8 render_ok(const wire::FrameRequest& request) {
    Answer a = render(request);
    if (!a.image) throw std::runtime_error("frame failed: " + a.error + "\n" + log());
    return *a.image;
  }

  // tessera-render of the same size and tiles on the host device with `options`.
  ImageRgba8 reference(const std::string& name, const std::string& options) {
    const auto out = dir_ / (name + ".png");
    const auto r = testing::run_command(testing::render_binary().string() + " " + testing::cornell_tpk().string() + " --size " +
                                        kSize + " --tile " + std::to_string(kTile) + " --device host " + options + " -o " +
                                        out.string());
    if (r.exit_code != 0) throw std::runtime_error("tessera-render failed: " + r.output);
    return read_image(out);
  }

 private:
  TempDir dir_{"cluster_eye_views"};
  std::unique_ptr<WorkerProcess> worker_;
  std::unique_ptr<testing::SealedClient> client_;
  wire::WorkerInfo info_;
  uint64_t scene_hash_ = 0;
  uint64_t last_id_ = 0;
};

std::string eye_view_options(bool stereo) {
  return std::string(" --eye-view ") + kLeftEye + (stereo ? std::string(" --eye-view ") + kRightEye : std::string());
}

ImageRgba8 eye_image(const ImageRgba8& frame, int eye) { return extract_tile(frame, eye * int(kWidth), 0, int(kWidth), int(kHeight)); }

TEST(ClusterEyeViews, WorkerListsTheFieldsItHonours) {
  EyeViewWorker w;
  const auto& features = w.info().features();
  EXPECT_NE(std::find(features.begin(), features.end(), "eye_views"), features.end());
  EXPECT_NE(std::find(features.begin(), features.end(), "aa_sample"), features.end());
}

// Raytrace stereo: each eye has exactly its own pose and off-axis frustum, not the head pose's.
TEST(ClusterEyeViews, RaytraceStereoEyeViewsEqualTesseraRender) {
  EyeViewWorker w;
  wire::FrameRequest r = w.request(true);
  const ImageRgba8 head = w.render_ok(r);
  EyeViewWorker::stereo_eye_views(r);
  r.set_frame_id(w.next_id());
  const ImageRgba8 frame = w.render_ok(r);
  const ImageRgba8 reference = w.reference("raytrace_stereo", eye_view_options(true));
  ASSERT_EQ(reference.width(), int(2 * kWidth));
  EXPECT_EQ(frame, reference);
  EXPECT_NE(frame, head);
  EXPECT_NE(eye_image(frame, 0), eye_image(frame, 1));
  // The left eye alone (mono) is the stereo frame's left half.
  wire::FrameRequest mono = w.request(false);
  *mono.add_eye_views() = wire_eye_view(kLeftEye);
  EXPECT_EQ(w.render_ok(mono), eye_image(reference, 0));
}

// pathtrace stereo: both eyes of a tile pair traced with their own cameras, samples reprojected
// between them through each eye's own pose and frustum.
TEST(ClusterEyeViews, PathtraceStereoEyeViewsEqualTesseraRender) {
  EyeViewWorker w;
  wire::FrameRequest r = w.request(true);
  EyeViewWorker::use_pathtrace(r, 2);
  EyeViewWorker::stereo_eye_views(r);
  r.set_aa_sample(5);  // pathtrace jitters its own samples: ignored
  const ImageRgba8 frame = w.render_ok(r);
  EXPECT_EQ(frame, w.reference("pathtrace_stereo", " --mode pathtrace --spp 2" + eye_view_options(true)));
  // Not the head pose's eyes (a new view starts a fresh accumulation).
  wire::FrameRequest head = w.request(true);
  EyeViewWorker::use_pathtrace(head, 2);
  EXPECT_NE(w.render_ok(head), frame);
  // Samples do travel between the canted eyes.
  const auto json = testing::run_command(testing::render_binary().string() + " " + testing::cornell_tpk().string() + " --size " +
                                         kSize + " --device host --mode pathtrace --spp 2 --json -o " +
                                         (w.dir() / "pt.png").string() + eye_view_options(true));
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto stats = nlohmann::json::parse(json.output.substr(json.output.find('{')));
  EXPECT_EQ(stats["eyes"], 2);
  EXPECT_GT(stats["reprojected_per_sample"].get<double>(), 0.2) << json.output;
}

// vct, mono eye view; and its anti-aliasing: frames of aa_sample 0..2 accumulate to --aa 3.
TEST(ClusterEyeViews, VctEyeViewAndAntiAliasingEqualTesseraRender) {
  EyeViewWorker w;
  const std::string vct = " --mode vct --vct-grid 64";
  wire::FrameRequest r = w.request(false);
  r.mutable_vct()->set_grid(64);
  r.mutable_vct()->set_exposure(1);
  *r.add_eye_views() = wire_eye_view(kLeftEye);
  const ImageRgba8 single = w.reference("vct_eye", vct + eye_view_options(false));
  master::SampleAccumulator acc;
  for (uint32_t k = 0; k < 3; ++k) {
    r.set_frame_id(w.next_id());
    r.set_aa_sample(acc.next_aa_sample());
    acc.add(w.render_ok(r));
    if (k == 0) {
      EXPECT_EQ(acc.resolve(), single);
    }
  }
  const ImageRgba8 aa = w.reference("vct_aa3", vct + " --aa 3" + eye_view_options(false));
  EXPECT_EQ(acc.resolve(), aa);
  EXPECT_NE(aa, single);
}

// Raytrace anti-aliasing: aa_sample 0 is the unjittered image byte for byte, other samples differ,
// and the mean of N frames is tessera-render --aa N exactly (both average the same 8-bit samples
// in linear light), closer to a 64-sample render than one frame is.
TEST(ClusterEyeViews, AccumulatedRaytraceSamplesEqualTesseraRenderAa) {
  EyeViewWorker w;
  const std::string pose = std::string(" --pose ") + testing::kCornellPose + " --fov 40";
  wire::FrameRequest r = w.request(false);
  const ImageRgba8 centre = w.render_ok(r);
  EXPECT_EQ(centre, w.reference("plain", pose));
  EXPECT_EQ(centre, w.reference("aa1", pose + " --aa 1"));
  constexpr uint32_t kSamples = 8;
  master::SampleAccumulator acc;
  for (uint32_t k = 0; k < kSamples; ++k) {
    r.set_frame_id(w.next_id());
    r.set_aa_sample(acc.next_aa_sample());
    const ImageRgba8 sample = w.render_ok(r);
    if (k > 0) {
      EXPECT_NE(sample, centre) << k;
    }
    acc.add(sample);
  }
  const ImageRgba8 aa = w.reference("aa8", pose + " --aa 8");
  EXPECT_EQ(acc.resolve(), aa);
  const ImageRgba8 truth = w.reference("aa64", pose + " --aa 64");
  EXPECT_GT(psnr_rgb(aa, truth), psnr_rgb(centre, truth) + 3.0);
  // Stereo with explicit eyes: the same rule per eye, side by side.
  wire::FrameRequest s = w.request(true);
  EyeViewWorker::stereo_eye_views(s);
  master::SampleAccumulator stereo;
  for (uint32_t k = 0; k < 4; ++k) {
    s.set_frame_id(w.next_id());
    s.set_aa_sample(k);
    stereo.add(w.render_ok(s));
  }
  EXPECT_EQ(stereo.resolve(), w.reference("stereo_aa4", " --aa 4" + eye_view_options(true)));
}

TEST(ClusterEyeViews, InvalidEyeViewsAreRefusedAndTheWorkerKeepsServing) {
  EyeViewWorker w;
  const auto refused = [&](wire::FrameRequest r, const std::string& needle) {
    const auto a = w.render(r);
    EXPECT_FALSE(a.image) << needle;
    EXPECT_FALSE(a.fatal) << a.error;
    EXPECT_NE(a.error.find(needle), std::string::npos) << a.error;
  };
  wire::FrameRequest r = w.request(true);
  *r.add_eye_views() = wire_eye_view(kLeftEye);
  refused(r, "eye_views: 1 given, but a stereo frame needs 2 (left, right)");
  r = w.request(false);
  EyeViewWorker::stereo_eye_views(r);
  refused(r, "eye_views: 2 given, but a mono frame needs 1");
  r = w.request(true);
  EyeViewWorker::stereo_eye_views(r);
  r.mutable_eye_views(1)->mutable_orientation()->set_y(1.05f);
  refused(r, "eye_views[1] (right): the quaternion's norm is");
  r = w.request(true);
  EyeViewWorker::stereo_eye_views(r);
  r.mutable_eye_views(0)->mutable_position()->set_y(NAN);
  refused(r, "eye_views[0] (left): the position is not finite");
  r = w.request(false);
  *r.add_eye_views() = wire_eye_view(kLeftEye);
  r.mutable_eye_views(0)->mutable_frustum()->set_right(-0.5f);
  refused(r, "empty frustum (left must be less than right)");
  r = w.request(false);
  *r.add_eye_views() = wire_eye_view(kLeftEye);
  r.mutable_eye_views(0)->mutable_frustum()->set_top(INFINITY);
  refused(r, "the frustum is not finite");
  r = w.request(false);
  *r.add_eye_views() = wire_eye_view(kLeftEye);
  r.mutable_eye_views(0)->clear_frustum();
  refused(r, "empty frustum");
  r = w.request(false);
  *r.add_eye_views() = wire_eye_view(kLeftEye);
  r.mutable_eye_views(0)->clear_orientation();
  refused(r, "the quaternion's norm is 0");
  // Still serving on the same connection.
  r = w.request(false);
  *r.add_eye_views() = wire_eye_view(kLeftEye);
  EXPECT_EQ(w.render_ok(r), w.reference("after", eye_view_options(false)));
}

// tessera-render's new options: one clear error line and a non-zero exit on misuse.
TEST(ClusterEyeViews, TesseraRenderRefusesMisusedEyeViewAndAaOptions) {
  TempDir dir("render_eye_view_cli");
  const std::string base = testing::render_binary().string() + " " + testing::cornell_tpk().string() + " --size 8x8 --device host -o " +
                           (dir / "x.png").string();
  const std::pair<std::string, std::string> cases[] = {
      {std::string(" --eye-view ") + kLeftEye + " --pose " + testing::kCornellPose, "--pose does not apply with --eye-view"},
      {std::string(" --eye-view ") + kLeftEye + " --fov 50", "--fov does not apply with --eye-view"},
      {std::string(" --eye-view ") + kLeftEye + " --eye-view " + kLeftEye + " --eye-view " + kLeftEye, "given 3 times"},
      {" --eye-view 0,0,0,1.1,0,0,0,-1,1,-1,1", "the quaternion's norm is 1.1, not 1"},
      {" --eye-view 0,0,0,1,0,0,0,-1,1,-1", "expected 11 comma-separated numbers"},
      {std::string(" --mode pathtrace --stereo --eye-view ") + kLeftEye, "--stereo with --eye-view needs two"},
      {" --mode pathtrace --aa 4", "--aa needs --mode raytrace or vct"},
      {" --aa 0", "--aa"},
  };
  for (const auto& [options, needle] : cases) {
    const auto r = testing::run_command(base + options);
    EXPECT_NE(r.exit_code, 0) << options;
    EXPECT_NE(r.output.find(needle), std::string::npos) << options << ": " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir / "x.png")) << options;
  }
}

}  // namespace
}  // namespace tessera
