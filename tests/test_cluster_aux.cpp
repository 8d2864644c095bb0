// Depth and alpha with every frame (FrameRequest.aux) through a real tessera-worker on loopback:
// the worker lists the feature; raytrace, pathtrace (both eyes of each tile pair) and vct tiles
// carry the inverse depth tessera-render --depth-out writes; a transparent frame is the opaque one
// where alpha is 255 and black elsewhere, its shadow where the scene's sun casts it; bad requests
// are refused with BAD_REQUEST and the connection keeps serving.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "aux_test_scenes.h"
#include "cluster_test_support.h"
#include "common/base/hash.h"
#include "common/net/tile_codec.h"
#include "common/net/tile_grid.h"
#include "common/render/aux_outputs.h"
#include "worker/render/depth_png.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
using testing::WorkerProcess;

constexpr uint32_t kSize = 32, kTile = 16;
constexpr float kNear = 2.0f;

// A frame's tiles put together: colour words and inverse depths, eyes side by side.
struct AuxFrame {
  uint32_t width = 0, height = 0;  // of all eyes together
  std::vector<uint32_t> rgba;
  std::vector<uint16_t> depth;
  bool every_tile_has_depth = true;
};

// One worker (host device, one thread) with the sphere scene loaded on a sealed connection.
class AuxWorker {
 public:
  AuxWorker() {
    testing::write_secret(dir_ / "secret", testing::kClusterSecret);
    std::filesystem::create_directories(dir_ / "scenes");
    tpk_ = testing::pack_shapes(dir_ / "scenes", "sphere", testing::kSphereScene);
    worker_ = std::make_unique<WorkerProcess>(dir_.path(), "w", dir_ / "scenes", dir_ / "secret");
    client_ = std::make_unique<testing::SealedClient>(worker_->port(), testing::kClusterSecret);
    if (!client_->ready()) throw std::runtime_error("no welcome: " + worker_->log());
    const auto bytes = read_file_bytes(tpk_);
    hash_ = hash64(bytes.data(), bytes.size());
    wire::Envelope load;
    load.mutable_load_scene()->set_content_hash(hash_);
    client_->send(load);
    const auto status = client_->receive(30s);
    if (!status || !status->has_scene_status() || status->scene_status().state() != wire::SceneStatus::READY)
      throw std::runtime_error("scene not ready: " + worker_->log());
  }
  const wire::WorkerInfo& info() const { return client_->info(); }
  const std::filesystem::path& tpk() const { return tpk_; }
  const TempDir& dir() const { return dir_; }
  std::string log() const { return worker_->log(); }
  uint64_t next_id() { return ++last_id_; }  // frame ids increase on a connection

  // Every tile of a mono kSize x kSize raytrace frame from the scene's camera, asking for depth.
  wire::FrameRequest request(bool stereo = false) {
    wire::FrameRequest r;
    r.set_frame_id(++last_id_);
    r.set_scene_hash(hash_);
    auto& pose = *r.mutable_pose();
    pose.mutable_position()->set_y(10);
    pose.mutable_orientation()->set_w(0.70710678f);
    pose.mutable_orientation()->set_x(-0.70710678f);
    r.mutable_eyes()->set_layout(stereo ? wire::Eyes::STEREO : wire::Eyes::MONO);
    r.mutable_eyes()->set_ipd(0.5f);
    r.mutable_projection()->set_vertical_fov_degrees(testing::kDownFov);
    r.mutable_image()->set_width(kSize);
    r.mutable_image()->set_height(kSize);
    r.mutable_image()->set_tile_size(kTile);
    r.set_reply(wire::BATCH);
    r.set_encoding(wire::ZSTD_RGBA8);
    r.mutable_raytrace()->set_max_depth(6);
    r.mutable_raytrace()->set_light_samples(4);
    r.mutable_raytrace()->set_exposure(1);
    r.mutable_aux()->set_depth(true);
    r.mutable_aux()->set_depth_near(kNear);
    for (uint32_t t = 0; t < net::TileGrid(kSize, kSize, kTile, stereo ? 2 : 1).tile_count(); ++t) r.add_tiles(t);
    return r;
  }

  struct Answer {
    std::optional<AuxFrame> frame;
    wire::ErrorMessage error;
  };
  Answer render(const wire::FrameRequest& request) {
    wire::Envelope m;
    *m.mutable_frame_request() = request;
    client_->send(m);
    const uint32_t eyes = request.eyes().layout() == wire::Eyes::STEREO ? 2 : 1;
    const net::TileGrid grid(kSize, kSize, kTile, eyes);
    AuxFrame frame;
    frame.width = kSize * eyes;
    frame.height = kSize;
    frame.rgba.resize(size_t(frame.width) * frame.height);
    frame.depth.resize(frame.rgba.size());
    uint32_t tiles = 0;
    Answer answer;
    while (tiles < grid.tile_count()) {
      const auto reply = client_->receive(60s);
      if (!reply) throw std::runtime_error("no answer: " + log());
      if (reply->has_error()) {
        answer.error = reply->error();
        return answer;
      }
      if (!reply->has_tile_batch() || reply->tile_batch().frame_id() != request.frame_id()) continue;
      for (const auto& tile : reply->tile_batch().tiles()) {
        const net::TileSpec spec = grid.tile(tile.tile_id());
        const auto bytes = net::decode_tile_pixels(tile);
        std::vector<uint16_t> q;
        if (tile.depth().empty()) frame.every_tile_has_depth = false;
        else q = decode_inverse_depth({reinterpret_cast<const uint8_t*>(tile.depth().data()), tile.depth().size()},
                                      size_t(spec.width) * spec.height);
        for (uint32_t y = 0; y < spec.height; ++y)
          for (uint32_t x = 0; x < spec.width; ++x) {
            const size_t to = size_t(spec.y0 + y) * frame.width + spec.eye * kSize + spec.x0 + x, from = size_t(y) * spec.width + x;
            std::memcpy(&frame.rgba[to], &bytes[4 * from], 4);
            if (!q.empty()) frame.depth[to] = q[from];
          }
        ++tiles;
      }
    }
    answer.frame = std::move(frame);
    return answer;
  }
  AuxFrame render_ok(const wire::FrameRequest& request) {
    Answer a = render(request);
    if (!a.frame) throw std::runtime_error("frame refused: " + a.error.message());
    return *a.frame;
  }

 private:
  TempDir dir_{"cluster_aux"};
  std::filesystem::path tpk_;
  std::unique_ptr<WorkerProcess> worker_;
  std::unique_ptr<testing::SealedClient> client_;
  uint64_t hash_ = 0;
  uint64_t last_id_ = 0;
};

// tessera-render's depth of the same view (its pose and frustum), mono or the two eye views.
DepthImage reference_depth(const AuxWorker& w, const std::string& camera_options) {
  const auto out = w.dir() / "reference.png", depth = w.dir() / "reference_depth.png";
  const auto r = testing::run_command(testing::render_binary().string() + " " + w.tpk().string() + " --size " +
                                      std::to_string(kSize) + "x" + std::to_string(kSize) + " --device host " + camera_options +
                                      " --depth-out " + depth.string() + " --depth-near 2 -o " + out.string());
  if (r.exit_code != 0) throw std::runtime_error("tessera-render failed: " + r.output);
  return read_depth_png(depth);
}

const std::string kMonoCamera = std::string("--pose ") + testing::kDownPose + " --fov 33.398488";

TEST(ClusterAux, WorkerListsAuxOutputsAndSunOverride) {
  AuxWorker w;
  const auto& f = w.info().features();
  EXPECT_NE(std::find(f.begin(), f.end(), net::kAuxOutputsFeature), f.end());
  EXPECT_NE(std::find(f.begin(), f.end(), net::kSunOverrideFeature), f.end());
}

void set_sun(wire::FrameRequest& r, std::array<float, 3> d, std::array<float, 3> e) {
  auto& sun = *r.mutable_sun();
  sun.mutable_direction()->set_x(d[0]);
  sun.mutable_direction()->set_y(d[1]);
  sun.mutable_direction()->set_z(d[2]);
  sun.mutable_irradiance()->set_x(e[0]);
  sun.mutable_irradiance()->set_y(e[1]);
  sun.mutable_irradiance()->set_z(e[2]);
}

// The sun from the request in every mode: the shadow on the catcher moves to -x, the image changes,
// and a frame without it is the scene's own again.
TEST(ClusterAux, SunOverrideMovesTheShadowInEveryMode) {
  AuxWorker w;
  const auto alpha = [](const AuxFrame& f, float x) { return f.rgba[testing::down_pixel(kSize, x, 0.0f)] >> 24; };
  wire::FrameRequest r = w.request();
  r.mutable_aux()->set_transparent(true);
  const AuxFrame own = w.render_ok(r);
  set_sun(r, {-2, -2, 0}, {2, 2, 2});
  r.set_frame_id(w.next_id());
  const AuxFrame moved = w.render_ok(r);
  EXPECT_EQ(alpha(own, 1.5f), 204u);
  EXPECT_EQ(alpha(moved, 1.5f), 0u);
  EXPECT_EQ(alpha(moved, -1.5f), 204u);
  EXPECT_NE(moved.rgba, own.rgba);
  wire::FrameRequest back = w.request();
  back.mutable_aux()->set_transparent(true);
  
  EXPECT_EQ(w.render_ok(back).rgba, own.rgba);
  // vct relights its grid, pathtrace starts afresh: both images change with the sun.
  for (const bool vct : {true, false}) {
    wire::FrameRequest m = w.request();
    if (vct) m.mutable_vct()->set_grid(64);
    else m.mutable_pathtrace()->set_spp(2);
    const AuxFrame before = w.render_ok(m);
    set_sun(m, {-1, -1, 0}, {2, 2, 2});
    m.set_frame_id(w.next_id());
    const AuxFrame after = w.render_ok(m);
    EXPECT_NE(after.rgba, before.rgba) << (vct ? "vct" : "pathtrace");
  }
}

TEST(ClusterAux, RaytraceDepthEqualsTesseraRenderAndTransparencyKeepsTheColour) {
  AuxWorker w;
  wire::FrameRequest r = w.request();
  const AuxFrame opaque = w.render_ok(r);
  EXPECT_TRUE(opaque.every_tile_has_depth);
  EXPECT_EQ(opaque.depth, reference_depth(w, kMonoCamera).q);
  // The sphere's top, about 8 below the eye.
  EXPECT_NEAR(opaque.depth[testing::down_pixel(kSize, 0, 0)], testing::expected_inverse_depth(kNear, 8.0f), 300);
  EXPECT_EQ(opaque.depth[testing::down_pixel(kSize, 2.5f, 2.5f)], 0);  // nothing there

  wire::FrameRequest t = w.request();
  t.mutable_aux()->set_transparent(true);
  const AuxFrame clear = w.render_ok(t);
  EXPECT_EQ(clear.depth, opaque.depth);
  int covered = 0, shadow = 0;
  for (size_t i = 0; i < clear.rgba.size(); ++i) {
    const uint32_t alpha = clear.rgba[i] >> 24;
    if (alpha == 255) {
      ++covered;
      EXPECT_EQ(clear.rgba[i], opaque.rgba[i]) << i;
    } else {
      EXPECT_EQ(clear.rgba[i] & 0xFFFFFFu, 0u) << i;
      shadow += alpha > 0;
    }
  }
  EXPECT_GT(covered, 30);
  EXPECT_GT(shadow, 10);
  EXPECT_EQ(clear.rgba[testing::down_pixel(kSize, 1.5f, 0.0f)] >> 24, 204u);  // the scene's catcher, opacity 0.8
  EXPECT_EQ(clear.rgba[testing::down_pixel(kSize, -1.5f, 0.0f)] >> 24, 0u);
}

TEST(ClusterAux, PathtraceAndVctTilesCarryTheSameDepth) {
  AuxWorker w;
  const AuxFrame raytrace = w.render_ok(w.request());
  wire::FrameRequest v = w.request();
  v.mutable_vct()->set_grid(64);
  v.set_aa_sample(3);  // jittered colour, depth still through the pixel centres
  const AuxFrame vct = w.render_ok(v);
  EXPECT_EQ(vct.depth, raytrace.depth);
  // pathtrace stereo: both eyes of each tile pair, as tessera-render's eye views of the same eyes.
  wire::FrameRequest p = w.request(true);
  p.mutable_pathtrace()->set_spp(1);
  p.clear_tiles();
  for (uint32_t t = 0; t < net::TileGrid(kSize, kSize, kTile, 1).tile_count(); ++t) p.add_tiles(t);
  const AuxFrame stereo = w.render_ok(p);
  EXPECT_TRUE(stereo.every_tile_has_depth);
  const DepthImage left = reference_depth(w, "--eye-view -0.25,10,0,0.70710678,-0.70710678,0,0,-0.3,0.3,-0.3,0.3");
  const DepthImage right = reference_depth(w, "--eye-view 0.25,10,0,0.70710678,-0.70710678,0,0,-0.3,0.3,-0.3,0.3");
  int differ = 0;
  for (uint32_t y = 0; y < kSize; ++y)
    for (uint32_t x = 0; x < kSize; ++x) {
      differ += std::abs(int(stereo.depth[y * 2 * kSize + x]) - int(left.q[y * kSize + x])) > 1;
      differ += std::abs(int(stereo.depth[y * 2 * kSize + kSize + x]) - int(right.q[y * kSize + x])) > 1;
    }
  EXPECT_LE(differ, 8);  // the eyes' poses from the head and ipd against written ones: last bits only
  int eyes_differ = 0;  // the eyes see the sphere from 0.5 apart
  for (uint32_t y = 0; y < kSize; ++y)
    for (uint32_t x = 0; x < kSize; ++x) eyes_differ += stereo.depth[y * 2 * kSize + x] != stereo.depth[y * 2 * kSize + kSize + x];
  EXPECT_GT(eyes_differ, 10);
}

TEST(ClusterAux, BadAuxAndSunRequestsAreRefusedAndTheWorkerKeepsServing) {
  AuxWorker w;
  const auto refused = [&](wire::FrameRequest r, const std::string& needle) {
    const auto a = w.render(r);
    EXPECT_FALSE(a.frame) << needle;
    EXPECT_EQ(a.error.code(), wire::ErrorMessage::BAD_REQUEST) << a.error.message();
    EXPECT_FALSE(a.error.fatal());
    EXPECT_NE(a.error.message().find(needle), std::string::npos) << a.error.message();
  };
  wire::FrameRequest r = w.request();
  r.mutable_aux()->set_depth_near(0);
  refused(r, "depth_near must be finite and positive");
  r = w.request();
  r.mutable_aux()->set_depth_near(NAN);
  refused(r, "depth_near");
  r = w.request();
  r.mutable_aux()->set_transparent(true);
  r.mutable_aux()->set_shadow_catcher_height(INFINITY);
  refused(r, "shadow_catcher_height is not finite");
  r = w.request();
  r.mutable_aux()->set_transparent(true);
  r.mutable_aux()->set_shadow_opacity(2);
  refused(r, "shadow_opacity must lie in [0, 1]");
  r = w.request();
  set_sun(r, {0, 0, 0}, {1, 1, 1});
  refused(r, "sun direction is zero");
  r = w.request();
  set_sun(r, {0, -1, NAN}, {1, 1, 1});
  refused(r, "sun direction is not finite");
  r = w.request();
  set_sun(r, {0, -1, 0}, {1, -1, 1});
  refused(r, "outside [0, 1e4]");
  r = w.request();
  set_sun(r, {0, -1, 0}, {1, 1e5f, 1});
  refused(r, "outside [0, 1e4]");
  // Still serving on the same connection.
  const AuxFrame ok = w.render_ok(w.request());
  EXPECT_TRUE(ok.every_tile_has_depth);
}

}  // namespace
}  // namespace tessera
