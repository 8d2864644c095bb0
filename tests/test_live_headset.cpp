// The live session's headset display (master/web/PROTOCOL.md, "Headset display"): the eyes every
// frame was rendered with, the guard band, depth and alpha beside the JPEG bands, the AR place and
// light messages, and control passing on when the driving page leaves. The pieces on their own,
// then a master with two real workers driven over real sockets (live_test_support.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include <stb/stb_image.h>

#include <nlohmann/json.hpp>

#include "cluster_test_support.h"
#include "common/base/error.h"
#include "common/base/zstd_codec.h"
#include "common/render/camera_setup.h"
#include "live_test_support.h"
#include "master/frame/frame_assembler.h"
#include "master/live/client_messages.h"
#include "master/live/depth_plane.h"
#include "master/live/frame_message.h"
#include "master/live/jpeg_codec.h"
#include "master/live/zlib_stream.h"
#include "master/session/rendered_eyes.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;
using namespace master::live;
using namespace testing::live;
using nlohmann::json;

constexpr double kDegree = M_PI / 180.0;

// ---- pieces ----

TEST(HeadsetPieces, HeadPoseEyesAreTheWorkersHeadCamera) {
  const Pose head = look_at({1, 2, 3}, {4, 2, -5}, {0, 1, 0});
  const auto eyes = master::head_eye_views(head, 50.0f, 80, 40, true, 0.5f);
  ASSERT_EQ(eyes.size(), 2u);
  for (int e = 0; e < 2; ++e) {
    CameraSpec spec;
    spec.pose = head;
    spec.vertical_fov_degrees = 50.0f;
    spec.eye_offset = e == 0 ? -0.25f : 0.25f;
    const CameraParams expected = make_camera(spec, 80, 40);
    const CameraParams got = make_eye_camera(eyes[size_t(e)], 80, 40);
    EXPECT_NEAR(got.pos_x, expected.pos_x, 1e-5);
    EXPECT_NEAR(got.pos_z, expected.pos_z, 1e-5);
    EXPECT_NEAR(got.fwd_x, expected.fwd_x, 1e-6);
    EXPECT_NEAR(got.left, expected.left, 1e-6);
    EXPECT_NEAR(got.top, expected.top, 1e-6);
  }
  EXPECT_EQ(master::head_eye_views(head, 50.0f, 80, 40, false, 0.5f).size(), 1u);
}

TEST(HeadsetPieces, GuardBandWidensEveryEdgeAndKeepsThePixelDensity) {
  master::PoseSample pose;
  pose.views = {EyeView{{{0, 0, 0}, {1, 0, 0, 0}}, {-0.9f, 0.7f, -0.8f, 0.85f}},
                EyeView{{{0.06f, 0, 0}, {1, 0, 0, 0}}, {-0.7f, 0.9f, -0.8f, 0.85f}}};
  master::EyeRequest asked{400, 300, 60, true, 0, 0, true};
  const auto plain = master::rendered_eyes(pose, asked);
  EXPECT_EQ(plain.width, 400u);
  EXPECT_EQ(plain.guard_band_degrees, 0.0f);
  EXPECT_EQ(plain.views[1].frustum.right, 0.9f);
  asked.guard_band_degrees = 5;
  const auto wide = master::rendered_eyes(pose, asked);
  EXPECT_EQ(wide.guard_band_degrees, 5.0f);
  EXPECT_TRUE(wide.explicit_views);
  ASSERT_EQ(wide.views.size(), 2u);
  for (size_t e = 0; e < 2; ++e) {
    SCOPED_TRACE(e);
    const Frustum a = pose.views[e].frustum, f = wide.views[e].frustum;
    const double pixel_x = (a.right - a.left) / 400.0, pixel_y = (a.top - a.bottom) / 300.0;
    // Every edge 5 degrees further out, to a pixel.
    EXPECT_NEAR(f.left, std::tan(std::atan(a.left) - 5 * kDegree), pixel_x);
    EXPECT_NEAR(f.right, std::tan(std::atan(a.right) + 5 * kDegree), pixel_x);
    EXPECT_NEAR(f.bottom, std::tan(std::atan(a.bottom) - 5 * kDegree), pixel_y);
    EXPECT_NEAR(f.top, std::tan(std::atan(a.top) + 5 * kDegree), pixel_y);
    // The pixels per tangent unit the page asked for.
    EXPECT_NEAR(wide.width / (f.right - f.left), 400.0 / (a.right - a.left), 1e-3);
    EXPECT_NEAR(wide.height / (f.top - f.bottom), 300.0 / (a.top - a.bottom), 1e-3);
    EXPECT_EQ(wide.views[e].pose.position, pose.views[e].pose.position);
  }
  EXPECT_GT(wide.width, 440u);
  // The asked image's centre is the same scene point in the wider image.
  const auto centre = wide.rendered_point({0.5f, 0.5f});
  const Frustum a = pose.views[0].frustum, f = wide.views[0].frustum;
  EXPECT_NEAR(f.left + centre[0] * (f.right - f.left), 0.5 * (a.left + a.right), 1e-5);
  EXPECT_NEAR(f.top - centre[1] * (f.top - f.bottom), 0.5 * (a.bottom + a.top), 1e-5);
  // Edges stop 89 degrees from the axis (tan 57.3), in front of the eye; one beyond stays.
  const Frustum steep = master::widened_frustum({-30, 80, -1, 1}, 20);
  EXPECT_NEAR(steep.left, -std::tan(89 * kDegree), 1e-3);
  EXPECT_EQ(steep.right, 80.0f);
}

TEST(HeadsetPieces, FrameMessageCarriesDepthThenAlpha) {
  const ImageRgba8 image(4, 2, {10, 20, 30, 255});
  JpegEncoder encoder(90);
  std::vector<uint8_t> depth_bytes(16), alpha_raw(8);
  for (size_t i = 0; i < 8; ++i) {
    depth_bytes[2 * i] = uint8_t(i);
    depth_bytes[2 * i + 1] = uint8_t(0x80 + i);
    alpha_raw[i] = uint8_t(30 * i);
  }
  const std::string depth = zlib_compress(depth_bytes), alpha = zlib_compress(alpha_raw);
  AuxSections sections;
  sections.depth = &depth;
  sections.depth_near = 2.5f;
  sections.alpha = &alpha;
  const std::string message =
      pack_frame_message({{"type", "frame"}, {"width", 4}, {"height", 2}, {"eyes", 1}}, {{0, 2, encoder.encode(image)}}, sections);
  const FrameMessage frame = unpack_frame_message(message);
  EXPECT_EQ(frame.header["depth"]["near"], 2.5);
  EXPECT_EQ(frame.header["depth"]["bytes"], depth.size());
  EXPECT_EQ(frame.header["alpha"]["bytes"], alpha.size());
  const auto q = frame.depth_values();
  ASSERT_EQ(q.size(), 8u);
  EXPECT_EQ(q[3], 0x8303);  // little-endian
  EXPECT_EQ(frame.alpha_values()[7], 210);
  EXPECT_THROW(unpack_frame_message(message.substr(0, message.size() - 1)), Error);
  EXPECT_THROW(unpack_frame_message(message + "x"), Error);
  const FrameMessage bare = unpack_frame_message(pack_frame_message({{"type", "frame"}, {"width", 4}, {"height", 2}},
                                                                    {{0, 2, encoder.encode(image)}}));
  EXPECT_FALSE(bare.depth);
  EXPECT_FALSE(bare.alpha);
  EXPECT_THROW(bare.depth_values(), Error);
  EXPECT_THROW(zlib_decompress(depth, 15), Error);  // not the size it claims
}

// Depth for the page: one sample per k x k pixels of each eye, the block's nearest surface, never
// mixing the eyes; the header names the plane and the page's reader inflates exactly it.
TEST(HeadsetPieces, DepthPlaneKeepsEachBlocksNearestSurfacePerEye) {
  EXPECT_EQ(depth_plane_scale(160), 1u);
  EXPECT_EQ(depth_plane_scale(256), 1u);
  EXPECT_EQ(depth_plane_scale(257), 2u);
  EXPECT_EQ(depth_plane_scale(1024), 4u);
  // Two eyes of 5 x 3 pixels, k = 2: 3 x 2 samples an eye, edge blocks cut.
  const uint32_t w = 5, h = 3, eyes = 2;
  std::vector<uint16_t> depth(size_t(w) * eyes * h, 0);
  const auto at = [&](uint32_t eye, uint32_t x, uint32_t y) -> uint16_t& { return depth[size_t(y) * w * eyes + eye * w + x]; };
  at(0, 1, 1) = 700;   // block (0, 0) of the left eye
  at(0, 0, 0) = 300;
  at(0, 4, 2) = 900;   // the cut corner block (2, 1)
  at(1, 0, 0) = 50;    // the right eye's first block: not the left eye's last column
  at(0, 4, 0) = 10;
  const std::vector<uint16_t> plane = downsample_depth(depth, w, h, eyes, 2);
  ASSERT_EQ(plane.size(), size_t(3) * eyes * 2);
  EXPECT_EQ(plane[0], 700);
  EXPECT_EQ(plane[2], 10);
  EXPECT_EQ(plane[3], 50);
  EXPECT_EQ(plane[6 + 2], 900);
  EXPECT_EQ(downsample_depth(depth, w, h, eyes, 1), depth);

  std::vector<uint8_t> bytes(plane.size() * 2);
  for (size_t i = 0; i < plane.size(); ++i) {
    bytes[2 * i] = uint8_t(plane[i] & 0xff);
    bytes[2 * i + 1] = uint8_t(plane[i] >> 8);
  }
  const std::string packed = zlib_compress(bytes);
  AuxSections sections;
  sections.depth = &packed;
  sections.depth_near = 1;
  sections.depth_scale = 2;
  JpegEncoder encoder(90);
  const FrameMessage frame = unpack_frame_message(pack_frame_message(
      {{"type", "frame"}, {"width", w}, {"height", h}, {"eyes", eyes}}, {{0, h, encoder.encode(ImageRgba8(w * eyes, h, {0, 0, 0, 255}))}}, sections));
  EXPECT_EQ(frame.header["depth"]["scale"], 2);
  EXPECT_EQ(frame.header["depth"]["width"], 3);
  EXPECT_EQ(frame.header["depth"]["height"], 2);
  EXPECT_EQ(frame.depth_values(), plane);
}

// Deflated in pieces at once, still one zlib stream (its checksum over the whole).
TEST(HeadsetPieces, ZlibInPiecesIsOneStream) {
  std::vector<uint8_t> raw(3 * 1024 * 1024 + 17);
  uint32_t state = 1;
  for (size_t i = 0; i < raw.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    raw[i] = uint8_t(i % 4096 < 2048 ? (i / 4096) & 0xff : state >> 24);  // runs and noise
  }
  const std::string whole = zlib_compress(raw, 1, 1), pieces = zlib_compress(raw, 1, 6);
  EXPECT_NE(whole, pieces);
  for (const std::string* stream : {&whole, &pieces}) {
    const std::string back = zlib_decompress(*stream, raw.size());
    ASSERT_EQ(back.size(), raw.size());
    EXPECT_EQ(std::memcmp(back.data(), raw.data(), raw.size()), 0);
  }
  EXPECT_LT(pieces.size(), whole.size() + 1024);
  EXPECT_EQ(zlib_decompress(zlib_compress({}, 1, 4), 0), "");
}

TEST(HeadsetPieces, AssemblerCompositesDepthAndLeavesZeroWhereATileHasNone) {
  const net::TileGrid grid(12, 8, 8, 2);  // tiles 8x8 and 4x8, both eyes
  master::FrameAssembler assembler(grid, true);
  ASSERT_EQ(assembler.depth().size(), 192u);
  for (uint32_t id = 0; id < grid.tile_count(); ++id) {
    const net::TileSpec spec = grid.tile(id);
    wire::TileResult tile;
    tile.set_tile_id(id);
    tile.set_x0(spec.x0);
    tile.set_y0(spec.y0);
    tile.set_width(spec.width);
    tile.set_height(spec.height);
    tile.set_encoding(wire::RAW_RGBA8);
    tile.set_data(std::string(size_t(spec.width) * spec.height * 4, '\x7f'));
    if (id != 1) {  // tile 1 comes from a worker without depth
      std::vector<uint8_t> q;
      for (uint32_t y = 0; y < spec.height; ++y)
        for (uint32_t x = 0; x < spec.width; ++x) {
          const uint16_t v = uint16_t(1000 * (id + 1) + 10 * y + x);
          q.push_back(uint8_t(v & 0xff));
          q.push_back(uint8_t(v >> 8));
        }
      const auto packed = zstd_compress(q, 1);
      tile.set_depth(std::string(packed.begin(), packed.end()));
    }
    assembler.add(tile, 0);
  }
  const auto& d = assembler.depth();
  const size_t stride = 24;
  EXPECT_EQ(d[0], 1000);
  EXPECT_EQ(d[2 * stride + 3], 1000 + 23);
  EXPECT_EQ(d[1 * stride + 8], 0);               // tile 1: no depth
  EXPECT_EQ(d[3 * stride + 12 + 1], 3000 + 31);  // the right eye's first tile
  wire::TileResult bad;
  bad.set_tile_id(0);
  bad.set_width(8);
  bad.set_height(8);
  bad.set_encoding(wire::RAW_RGBA8);
  bad.set_data(std::string(256, '\0'));
  bad.set_depth("not zstd");
  master::FrameAssembler other(grid, true);
  EXPECT_THROW(other.composite(bad), Error);
}

TEST(HeadsetPieces, PlaceAndLightAreCheckedNotFatal) {
  const auto place = std::get<Place>(parse_client_message(R"({"type":"place","floor":[1,-2.5,3]})"));
  EXPECT_EQ(place.floor[1], -2.5f);
  const auto light = std::get<Light>(parse_client_message(R"({"type":"light","direction":[0,-1,0.2],"irradiance":[3,2.5,2]})"));
  ASSERT_TRUE(light.sun);
  EXPECT_EQ(light.sun->irradiance[0], 3.0f);
  EXPECT_FALSE(std::get<Light>(parse_client_message(R"({"type":"light"})")).sun);
  for (const char* refused : {R"({"type":"place"})", R"({"type":"place","floor":[1,null,3]})", R"({"type":"place","floor":[1,2,2e6]})",
                              R"({"type":"place","floor":"here"})",
                              R"({"type":"light","direction":[0,0,0],"irradiance":[1,1,1]})",
                              R"({"type":"light","direction":[0,-1,0],"irradiance":[1,-1,1]})",
                              R"({"type":"light","direction":[0,-1,0],"irradiance":[1,1,20000]})",
                              R"({"type":"light","direction":[0,-1,0]})", R"({"type":"light","direction":[0,null,0],"irradiance":[1,1,1]})"}) {
    SCOPED_TRACE(refused);
    const ClientMessage m = parse_client_message(refused);
    ASSERT_TRUE(std::holds_alternative<RefusedRequest>(m));
    EXPECT_FALSE(std::get<RefusedRequest>(m).reason.empty());
  }
  EXPECT_THROW(parse_client_message(R"({"type":"place","floor":[1,2,1e400]})"), ProtocolError);  // not JSON a page writes
  EXPECT_TRUE(std::get<Hello>(parse_client_message(R"({"type":"hello","want":"drive","depth":true})")).depth);
  EXPECT_THROW(parse_client_message(R"({"type":"hello","depth":"yes"})"), ProtocolError);
  EXPECT_TRUE(*std::get<SettingsChange>(parse_client_message(R"({"type":"settings","background":"transparent"})")).transparent);
  EXPECT_TRUE(std::holds_alternative<RefusedSettings>(parse_client_message(R"({"type":"settings","background":"green"})")));
}

// ---- a live master with two workers ----

// Whether the workers (both alike) list `feature`, from the master's "ready:" lines.
bool workers_list(const LiveMaster& m, const std::string& feature) {
  const std::string log = m.log();
  const size_t ready = log.find("ready: ");
  if (ready == std::string::npos) return false;
  const size_t end = log.find('\n', ready);
  return log.substr(ready, end - ready).find(feature) != std::string::npos;
}

void expect_view(const json& view, std::array<float, 3> position, std::array<float, 4> orientation, std::array<double, 4> frustum,
                 double tolerance = 1e-4) {
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(view["position"][i].get<double>(), position[i], 1e-3) << view.dump();
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(view["orientation"][i].get<double>(), orientation[i], 1e-5) << view.dump();
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(view["frustum"][i].get<double>(), frustum[i], tolerance) << view.dump();
}

json xr_pose(uint64_t id) {
  json pose = pose_message(id, {278, 273, -800});
  pose["views"] = {{{"position", {268, 273, -800}}, {"orientation", {0, 0, 1, 0}}, {"frustum", {-0.62, 0.5, -0.41, 0.45}}},
                   {{"position", {288, 273, -800}}, {"orientation", {0, 0, 1, 0}}, {"frustum", {-0.5, 0.62, -0.41, 0.45}}}};
  return pose;
}

// Without a guard band the header's views are the eyes asked for: the flat page's head pose and
// field of view (mono, then stereo with the scene's ipd), and an XR page's own eye views.
TEST(LiveHeadset, EveryFrameNamesTheEyesItWasRenderedWith) {
  LiveMaster m({"--max-samples", "1"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = m.connect();
  d.send_text(R"({"type":"hello","want":"drive","client":"desktop"})");
  const auto session = next_text(d, "session");
  ASSERT_TRUE(session) << m.log();
  EXPECT_EQ((*session)["guard_band"], 0);
  const double fov = (*session)["scene"]["camera"]["fov"];
  const double t = std::tan(fov * 0.5 * kDegree), aspect = 64.0 / 48.0;
  d.send_text(pose_message(1, {278, 273, -800}).dump());
  const auto mono = frame_of_pose(d, 1);
  ASSERT_TRUE(mono) << m.log();
  EXPECT_EQ(mono->header["guard_band"], 0);
  ASSERT_EQ(mono->header["views"].size(), 1u);
  expect_view(mono->header["views"][0], {278, 273, -800}, {0, 0, 1, 0}, {-t * aspect, t * aspect, -t, t});

  d.send_text(json{{"type", "settings"}, {"stereo", true}}.dump());
  std::optional<json> stereo_session;
  while ((stereo_session = next_text(d, "session")) && !(*stereo_session)["stereo"].get<bool>()) {
  }
  ASSERT_TRUE(stereo_session) << m.log();
  const float half_ipd = 0.032f * (*stereo_session)["scene"]["units_per_meter"].get<float>();
  d.send_text(pose_message(2, {278, 273, -800}).dump());
  const auto stereo = frame_of_pose(d, 2);
  ASSERT_TRUE(stereo) << m.log();
  ASSERT_EQ(stereo->header["views"].size(), 2u);
  // Looking down +z, the head's right is -x: the left eye sits at +x.
  expect_view(stereo->header["views"][0], {278 + half_ipd, 273, -800}, {0, 0, 1, 0}, {-t * aspect, t * aspect, -t, t});
  expect_view(stereo->header["views"][1], {278 - half_ipd, 273, -800}, {0, 0, 1, 0}, {-t * aspect, t * aspect, -t, t});

  d.send_text(xr_pose(3).dump());
  const auto xr = frame_of_pose(d, 3);
  ASSERT_TRUE(xr) << m.log();
  ASSERT_EQ(xr->header["views"].size(), 2u);
  expect_view(xr->header["views"][0], {268, 273, -800}, {0, 0, 1, 0}, {-0.62, 0.5, -0.41, 0.45});
  expect_view(xr->header["views"][1], {288, 273, -800}, {0, 0, 1, 0}, {-0.5, 0.62, -0.41, 0.45});
  EXPECT_EQ(xr->header["width"], 64);
}

// --guard-band 6: every eye 6 degrees wider on every side, the image grown so the pixels per
// tangent unit stay the page's; the frame decodes to that size and its header says so.
TEST(LiveHeadset, GuardBandWidensEveryEyeAndGrowsTheImage) {
  LiveMaster m({"--max-samples", "1", "--guard-band", "6"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  d.send_text(xr_pose(1).dump());
  const auto xr = frame_of_pose(d, 1);
  ASSERT_TRUE(xr) << m.log();
  EXPECT_EQ(xr->header["guard_band"], 6);
  const uint32_t width = xr->header["width"], height = xr->header["height"];
  const double asked[2][4] = {{-0.62, 0.5, -0.41, 0.45}, {-0.5, 0.62, -0.41, 0.45}};
  for (size_t e = 0; e < 2; ++e) {
    SCOPED_TRACE(e);
    const auto& a = asked[e];
    const json f = xr->header["views"][e]["frustum"];
    const double px = (a[1] - a[0]) / 64, py = (a[3] - a[2]) / 48;
    EXPECT_NEAR(f[0].get<double>(), std::tan(std::atan(a[0]) - 6 * kDegree), px);
    EXPECT_NEAR(f[1].get<double>(), std::tan(std::atan(a[1]) + 6 * kDegree), px);
    EXPECT_NEAR(f[2].get<double>(), std::tan(std::atan(a[2]) - 6 * kDegree), py);
    EXPECT_NEAR(f[3].get<double>(), std::tan(std::atan(a[3]) + 6 * kDegree), py);
    EXPECT_NEAR(width / (f[1].get<double>() - f[0].get<double>()), 64 / (a[1] - a[0]), 1e-2);
    EXPECT_NEAR(height / (f[3].get<double>() - f[2].get<double>()), 48 / (a[3] - a[2]), 1e-2);
  }
  EXPECT_GT(width, 70u);
  EXPECT_GT(height, 53u);
  EXPECT_EQ(decode_frame(*xr).width(), int(2 * width));
  EXPECT_EQ(decode_frame(*xr).height(), int(height));

  // The flat page's head pose goes out as explicit eyes, widened the same way.
  d.send_text(pose_message(2, {278, 273, -800}).dump());
  const auto flat = frame_of_pose(d, 2);
  ASSERT_TRUE(flat) << m.log();
  if (!workers_list(m, "eye_views")) GTEST_SKIP() << "the workers render no explicit eye views";
  ASSERT_EQ(flat->header["views"].size(), 2u);  // still stereo, from the XR views
  EXPECT_EQ(flat->header["guard_band"], 6);
  EXPECT_GT(flat->header["width"].get<uint32_t>(), 64u);
  const json f = flat->header["views"][0]["frustum"];
  EXPECT_NEAR(f[0].get<double>(), -f[1].get<double>(), 1e-4);  // symmetric, as the head camera's
}

// A page that reprojects says depth:true: its frames carry the depth section (eyes*W*H inverse
// depths after the bands), a page that did not ask gets none; with workers that render depth it
// is tessera-render's --depth-out of the same eyes.
TEST(LiveHeadset, DepthGoesToThePagesThatAskForIt) {
  LiveMaster m({"--max-samples", "1"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = m.connect();
  d.send_text(R"({"type":"hello","want":"drive","client":"xr","depth":true})");
  std::optional<json> session;
  while ((session = next_text(d, "session")) && !(*session)["depth"].get<bool>()) {
  }
  ASSERT_TRUE(session) << m.log();
  LiveClient w = m.connect();
  w.send_text(R"({"type":"hello","want":"watch"})");
  ASSERT_TRUE(next_text(w, "session"));
  d.send_text(xr_pose(1).dump());
  const auto frame = frame_of_pose(d, 1);
  ASSERT_TRUE(frame) << m.log();
  ASSERT_TRUE(frame->header.contains("depth")) << frame->header.dump();
  const double near = frame->header["depth"]["near"];
  EXPECT_NEAR(near, 0.05 * (*session)["scene"]["units_per_meter"].get<double>(), 1e-6);
  EXPECT_FALSE(frame->header.contains("alpha"));
  const std::vector<uint16_t> q = frame->depth_values();
  ASSERT_EQ(q.size(), 128u * 48u);
  const auto watched = frame_of_pose(w, 1);
  ASSERT_TRUE(watched) << m.log();
  EXPECT_FALSE(watched->depth) << "a page that did not ask got the depth";

  if (!workers_list(m, net::kAuxOutputsFeature)) GTEST_SKIP() << "the workers render no depth yet: every q is 0";
  const std::string eye[2] = {"268,273,-800,0,0,1,0,-0.62,0.5,-0.41,0.45", "288,273,-800,0,0,1,0,-0.5,0.62,-0.41,0.45"};
  for (int e = 0; e < 2; ++e) {
    SCOPED_TRACE(e);
    const auto out = m.dir / ("depth" + std::to_string(e) + ".png");
    const auto r = testing::run_command(testing::render_binary().string() + " " + testing::cornell_tpk().string() + " --eye-view " +
                                        eye[e] + " --size 64x48 --device host --depth-out " + out.string() + " --depth-near " +
                                        std::to_string(near) + " -o " + (m.dir / "colour.png").string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    int width = 0, height = 0, channels = 0;
    std::unique_ptr<stbi_us, void (*)(void*)> reference(stbi_load_16(out.c_str(), &width, &height, &channels, 1), stbi_image_free);
    ASSERT_TRUE(reference);
    ASSERT_EQ(width, 64);
    size_t differ = 0;
    for (int y = 0; y < 48; ++y)
      for (int x = 0; x < 64; ++x) differ += q[size_t(y) * 128 + size_t(e) * 64 + size_t(x)] != reference.get()[y * 64 + x];
    EXPECT_EQ(differ, 0u);
  }
}

// A transparent background puts the alpha section in every page's frames; opaque frames have none.
TEST(LiveHeadset, AlphaTravelsOnlyWithATransparentBackground) {
  LiveMaster m({"--max-samples", "1"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  d.send_text(pose_message(1, {278, 273, -800}).dump());
  const auto opaque = frame_of_pose(d, 1);
  ASSERT_TRUE(opaque) << m.log();
  EXPECT_FALSE(opaque->alpha);
  d.send_text(json{{"type", "settings"}, {"background", "transparent"}}.dump());
  std::optional<json> session;
  while ((session = next_text(d, "session")) && (*session)["background"] != "transparent") {
  }
  ASSERT_TRUE(session) << m.log();
  d.send_text(pose_message(2, {278, 273, -2500}).dump());  // far back: the box fills a part of the view
  const auto transparent = frame_of_pose(d, 2);
  ASSERT_TRUE(transparent) << m.log();
  ASSERT_TRUE(transparent->alpha) << transparent->header.dump();
  EXPECT_FALSE(transparent->depth);
  const auto alpha = transparent->alpha_values();
  ASSERT_EQ(alpha.size(), 64u * 48u);
  if (workers_list(m, net::kAuxOutputsFeature)) {
    EXPECT_GT(std::count(alpha.begin(), alpha.end(), 255), 0);  // the box
    EXPECT_GT(std::count(alpha.begin(), alpha.end(), 0), 0);    // around it
  } else {
    EXPECT_EQ(size_t(std::count(alpha.begin(), alpha.end(), 255)), alpha.size()) << "opaque tiles are opaque";
  }
  d.send_text(json{{"type", "settings"}, {"background", "opaque"}}.dump());
  while ((session = next_text(d, "session")) && (*session)["background"] != "opaque") {
  }
  ASSERT_TRUE(session) << m.log();
  d.send_text(pose_message(3, {278, 273, -800}).dump());
  const auto back = frame_of_pose(d, 3);
  ASSERT_TRUE(back) << m.log();
  EXPECT_FALSE(back->alpha);
}

// AR place and light: good values are echoed in the session message (and go to the workers); a NaN
// (null in JSON) or absurd value is one event, the page stays connected and the session goes on.
TEST(LiveHeadset, PlaceAndLightWithBadValuesAreOneEventEach) {
  LiveMaster m({"--max-samples", "1"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = driver(m);
  d.send_text(pose_message(1, {278, 273, -800}).dump());
  ASSERT_TRUE(frame_of_pose(d, 1)) << m.log();
  d.send_text(R"({"type":"place","floor":[10,-3.5,20]})");
  std::optional<json> session;
  while ((session = next_text(d, "session")) && (*session)["shadow_catcher"].is_null()) {
  }
  ASSERT_TRUE(session) << m.log();
  EXPECT_EQ((*session)["shadow_catcher"], -3.5);
  d.send_text(R"({"type":"light","direction":[0,-2,0],"irradiance":[3,3,2.5]})");
  while ((session = next_text(d, "session")) && (*session)["sun"].is_null()) {
  }
  ASSERT_TRUE(session) << m.log();
  EXPECT_EQ((*session)["sun"]["irradiance"], json({3, 3, 2.5}));

  for (const char* bad : {R"({"type":"place","floor":[null,0,0]})", R"({"type":"place","floor":[0,0,1e300]})",
                          R"({"type":"light","direction":[0,0,0],"irradiance":[1,1,1]})",
                          R"({"type":"light","direction":[0,-1,0],"irradiance":[1e9,1,1]})"}) {
    SCOPED_TRACE(bad);
    d.send_text(bad);
    std::optional<json> event;
    while ((event = next_text(d, "event", 10s)) && (*event)["text"].get<std::string>().find("refused") == std::string::npos) {
    }
    ASSERT_TRUE(event) << m.log();
    EXPECT_TRUE((*event)["text"].get<std::string>().rfind("place refused", 0) == 0 ||
                (*event)["text"].get<std::string>().rfind("light refused", 0) == 0)
        << (*event)["text"];
  }
  // Exactly one event each: nothing more is refused, and the session goes on with the sun in force.
  d.send_text(R"({"type":"light"})");
  while ((session = next_text(d, "session", 10s)) && !(*session)["sun"].is_null()) {
  }
  ASSERT_TRUE(session) << m.log();
  d.send_text(pose_message(2, {300, 273, -800}).dump());
  const auto after = frame_of_pose_noting_refusals(d, 2);
  EXPECT_TRUE(after.framed) << m.log();
  EXPECT_FALSE(after.more_refused);
  EXPECT_FALSE(m.master->wait(0ms).has_value());
}

// The driving page leaves: the page that wanted to drive takes over (told by a session message and
// an event), not a newer page that only watches, and its poses steer.
TEST(LiveHeadset, WhenTheDriverLeavesAnotherPageDrives) {
  LiveMaster m({"--max-samples", "1"});
  ASSERT_NE(m.port, 0) << m.log();
  std::optional<LiveClient> first(driver(m));
  LiveClient second = m.connect();
  second.send_text(R"({"type":"hello","want":"drive","client":"xr"})");
  const auto watching = next_text(second, "session");
  ASSERT_TRUE(watching) << m.log();
  EXPECT_EQ((*watching)["role"], "watch");  // the first page drives
  LiveClient watcher = m.connect();
  watcher.send_text(R"({"type":"hello","want":"watch","client":"desktop"})");
  ASSERT_TRUE(next_text(watcher, "session"));
  first->send_text(pose_message(1, {278, 273, -800}).dump());
  ASSERT_TRUE(frame_of_pose(*first, 1)) << m.log();
  first.reset();  // the driving page leaves
  std::optional<json> session;
  while ((session = next_text(second, "session", 10s)) && (*session)["role"] != "drive") {
  }
  ASSERT_TRUE(session) << "the page that wanted to drive was not handed control\n" << m.log();
  std::optional<json> event;
  while ((event = next_text(watcher, "event", 10s)) && (*event)["text"].get<std::string>().find("drives now") == std::string::npos) {
  }
  ASSERT_TRUE(event) << m.log();
  second.send_text(pose_message(2, {250, 273, -800}).dump());
  const auto frame = frame_of_pose(second, 2);
  ASSERT_TRUE(frame) << m.log();
  EXPECT_EQ(frame->header["position"], json({250, 273, -800}));
}

// The status tells the pages' traffic and what depth and alpha cost.
TEST(LiveHeadset, StatusCountsPageTrafficAndAuxCosts) {
  LiveMaster m({"--max-samples", "1"});
  ASSERT_NE(m.port, 0) << m.log();
  LiveClient d = m.connect();
  d.send_text(R"({"type":"hello","want":"drive","depth":true})");
  ASSERT_TRUE(next_text(d, "session"));
  d.send_text(json{{"type", "settings"}, {"background", "transparent"}}.dump());
  for (uint64_t id = 1; id <= 3; ++id) {
    d.send_text(pose_message(id, {278.0f + float(id), 273, -800}).dump());
    ASSERT_TRUE(frame_of_pose(d, id)) << m.log();
  }
  std::optional<json> status;
  while ((status = next_text(d, "status", 5s)) && (*status)["aux"]["alpha_bytes"] == 0) {
  }
  ASSERT_TRUE(status) << m.log();
  EXPECT_GT((*status)["page_mbit_s"].get<double>(), 0.0);
  EXPECT_GT((*status)["aux"]["depth_bytes"].get<double>(), 0.0);
  EXPECT_GT((*status)["aux"]["alpha_bytes"].get<double>(), 0.0);
  EXPECT_GE((*status)["aux"]["ms"].get<double>(), 0.0);
}

}  // namespace
}  // namespace tessera
