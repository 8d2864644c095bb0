// Explicit eye views and anti-aliasing samples on the host side: the jitter sequence and the
// jittered camera, checking and parsing eye views, WebXR view and projection matrices to eye
// views, and the linear-light mean behind tessera-render --aa and the master's SampleAccumulator.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "common/base/error.h"
#include "common/image/linear_mean.h"
#include "common/render/eye_view.h"
#include "common/render/jitter.h"
#include "common/render/xr_view.h"
#include "kernels/integrators/pathtrace.h"
#include "master/frame/sample_accumulator.h"

namespace tessera {
namespace {

std::array<float, 3> direction(const CameraParams& c, float x, float y) {
  const float3 d = camera_direction(&c, x, y);
  return {d.x, d.y, d.z};
}

CameraParams off_axis_camera() {
  EyeView view;
  view.pose.position = {1, 2, 3};
  view.pose.orientation = {0.9238795f, 0.0f, 0.3826834f, 0.0f};  // 45 degrees about +y
  view.frustum = {-0.6f, 0.4f, -0.3f, 0.5f};
  return make_eye_camera(checked_eye_view(view, "test"), 64, 48);
}

TEST(Jitter, SampleZeroIsThePixelCentreAndOthersStayInsideThePixel) {
  EXPECT_EQ(jitter_offset(0), (std::array<float, 2>{0.0f, 0.0f}));
  std::set<std::pair<float, float>> seen;
  for (uint32_t k = 1; k < 4096; ++k) {
    const auto o = jitter_offset(k);
    ASSERT_GT(o[0], -0.5f) << k;
    ASSERT_LT(o[0], 0.5f) << k;
    ASSERT_GT(o[1], -0.5f) << k;
    ASSERT_LT(o[1], 0.5f) << k;
    seen.insert({o[0], o[1]});
  }
  EXPECT_EQ(seen.size(), 4095u);  // no sample repeats another
  // Halton(2, 3): sample 1 is (1/2, 1/3) - 1/2, sample 2 is (1/4, 2/3) - 1/2.
  EXPECT_FLOAT_EQ(jitter_offset(1)[0], 0.0f);
  EXPECT_FLOAT_EQ(jitter_offset(1)[1], 1.0f / 3.0f - 0.5f);
  EXPECT_FLOAT_EQ(jitter_offset(2)[0], -0.25f);
  EXPECT_FLOAT_EQ(jitter_offset(2)[1], 2.0f / 3.0f - 0.5f);
  for (uint32_t big : {1u << 20, 0xFFFFFFFFu}) {
    const auto o = jitter_offset(big);
    EXPECT_TRUE(o[0] > -0.5f && o[0] < 0.5f && o[1] > -0.5f && o[1] < 0.5f) << big;
  }
}

// Low discrepancy: the first N samples cover each quarter of the pixel nearly evenly (a random
// sequence would often leave a quarter with one sample or none), and their mean is near the
// centre (exactly in x for powers of two), so the anti-aliased image is not shifted.
TEST(Jitter, FirstSamplesCoverThePixelEvenly) {
  for (uint32_t n : {8u, 16u, 64u}) {
    int quarters[4] = {0, 0, 0, 0};
    double mx = 0, my = 0;
    for (uint32_t k = 0; k < n; ++k) {
      const auto o = jitter_offset(k);
      quarters[(o[0] >= 0 ? 1 : 0) + (o[1] >= 0 ? 2 : 0)]++;
      mx += o[0] / double(n);
      my += o[1] / double(n);
    }
    for (int q : quarters) {
      EXPECT_GE(q, int(n / 4) - 2) << n;
      EXPECT_LE(q, int(n / 4) + 2) << n;
    }
    EXPECT_EQ(mx, 0.0) << n;
    EXPECT_LT(std::fabs(my), 0.05) << n;
  }
}

TEST(Jitter, ShiftedFrustumShiftsEveryRayByTheOffset) {
  const CameraParams c = off_axis_camera();
  const CameraParams same = jittered_camera(c, {0.0f, 0.0f});
  EXPECT_EQ(std::memcmp(&same, &c, sizeof c), 0);  // sample 0 is today's camera, bit for bit
  for (uint32_t k : {1u, 2u, 7u, 100u}) {
    const auto o = jitter_offset(k);
    const CameraParams j = jittered_camera(c, o);
    EXPECT_EQ(j.width, c.width);
    EXPECT_EQ(j.pos_x, c.pos_x);
    for (const auto& [x, y] : {std::pair{0.5f, 0.5f}, std::pair{31.5f, 20.5f}, std::pair{63.5f, 47.5f}}) {
      const auto a = direction(j, x, y), b = direction(c, x + o[0], y + o[1]);
      for (int i = 0; i < 3; ++i) EXPECT_NEAR(a[i], b[i], 1e-6f) << k << " " << x << "," << y;
    }
  }
}

TEST(EyeViews, ParsedViewGivesTheCameraOfItsPoseAndFrustum) {
  const EyeView v = parse_eye_view("1,2,3,0.9238795,0,0.3826834,0,-0.6,0.4,-0.3,0.5");
  EXPECT_EQ(v.pose.position, (std::array<float, 3>{1, 2, 3}));
  EXPECT_FLOAT_EQ(v.frustum.left, -0.6f);
  EXPECT_FLOAT_EQ(v.frustum.top, 0.5f);
  const CameraParams c = make_eye_camera(v, 64, 48);
  const CameraParams expected = off_axis_camera();
  EXPECT_EQ(std::memcmp(&c, &expected, sizeof c), 0);
  // The eye looks down its own -z: rotated 45 degrees about +y, that is (-sin 45, 0, -cos 45).
  EXPECT_NEAR(c.fwd_x, -0.7071068f, 1e-6f);
  EXPECT_NEAR(c.fwd_z, -0.7071068f, 1e-6f);
  // A quaternion off by less than 1 % is normalized.
  const EyeView n = parse_eye_view("0,0,0,1.005,0,0,0,-1,1,-1,1");
  EXPECT_FLOAT_EQ(n.pose.orientation[0], 1.0f);
}

TEST(EyeViews, InvalidViewsAreRefusedWithTheReason) {
  const auto message = [](const std::string& text) {
    try {
      parse_eye_view(text);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("0,0,0,1,0,0,0,-1,1,-1").find("expected 11 comma-separated numbers"), std::string::npos);
  EXPECT_NE(message("0,0,0,1,0,0,0,-1,1,-1,x").find("not a finite number"), std::string::npos);
  EXPECT_NE(message("0,0,0,1,0,0,0,-1,1,-1,nan").find("not a finite number"), std::string::npos);
  EXPECT_NE(message("0,0,0,1.05,0,0,0,-1,1,-1,1").find("norm is 1.05, not 1"), std::string::npos);
  EXPECT_NE(message("0,0,0,1,0,0,0,1,-1,-1,1").find("left must be less than right"), std::string::npos);
  EXPECT_NE(message("0,0,0,1,0,0,0,-1,1,1,1").find("bottom must be less than top"), std::string::npos);
  EyeView v;
  v.frustum = {-1, 1, -1, 1};
  v.pose.position = {0, NAN, 0};
  EXPECT_THROW(checked_eye_view(v, "eye"), Error);
  v.pose.position = {0, 0, 0};
  v.frustum.top = INFINITY;
  EXPECT_THROW(checked_eye_view(v, "eye"), Error);
}

// pathtrace reprojects a sample into the other eye through that eye's own camera: with canted,
// off-axis eyes a point lands on the other eye's image position whose ray meets the point.
TEST(EyeViews, ReprojectionUsesTheOtherEyesOwnPoseAndFrustum) {
  const CameraParams left = make_eye_camera(parse_eye_view("-0.032,0,0,0.9990482,0,0.0436194,0,-1.1,0.8,-0.9,1.0"), 64, 48);
  const CameraParams right = make_eye_camera(parse_eye_view("0.032,0,0,0.9990482,0,-0.0436194,0,-0.8,1.1,-0.95,0.9"), 64, 48);
  int inside = 0;
  for (uint32_t y = 1; y < 48; y += 5)
    for (uint32_t x = 1; x < 64; x += 5) {
      const float3 dir = camera_direction(&left, float(x) + 0.5f, float(y) + 0.5f);
      const float3 p = v3_madd(camera_origin(&left), dir, 2.0f + 0.05f * float(x + y));
      float xr = 0, yr = 0;
      ASSERT_TRUE(pt_project(&right, p, &xr, &yr));
      const float3 to_p = v3_normalize(v3_sub(p, camera_origin(&right)));
      EXPECT_GT(v3_dot(to_p, camera_direction(&right, xr, yr)), 1.0f - 1e-6f) << x << "," << y;
      inside += xr >= 0 && xr < 64 && yr >= 0 && yr < 48;
    }
  EXPECT_GT(inside, 50);
}

// Column-major 4x4 of a rigid transform with rotation q (w, x, y, z) and translation t.
std::array<float, 16> rigid_transform(const std::array<float, 4>& q, const std::array<float, 3>& t) {
  const auto x = rotate(q, {1, 0, 0}), y = rotate(q, {0, 1, 0}), z = rotate(q, {0, 0, 1});
  return {x[0], x[1], x[2], 0, y[0], y[1], y[2], 0, z[0], z[1], z[2], 0, t[0], t[1], t[2], 1};
}

// Column-major glFrustum with tangents (l, r, b, t) at unit distance, near n and far f.
std::array<float, 16> perspective(float l, float r, float b, float t, float n, float f) {
  std::array<float, 16> m{};
  m[0] = 2 / (r - l);
  m[5] = 2 / (t - b);
  m[8] = (r + l) / (r - l);
  m[9] = (t + b) / (t - b);
  m[10] = -(f + n) / (f - n);
  m[11] = -1;
  m[14] = -2 * f * n / (f - n);
  return m;
}

TEST(XrView, ViewTransformAndProjectionBecomeTheEyesPoseAndFrustum) {
  // A head turned 30 degrees left and tilted, an eye with a canted, asymmetric frustum.
  const float half = 0.5f * 30.0f * float(M_PI) / 180.0f;
  const std::array<float, 4> yaw{std::cos(half), 0, std::sin(half), 0}, pitch{0.9961947f, 0.0871557f, 0, 0};
  const std::array<float, 4> q{yaw[0] * pitch[0], yaw[0] * pitch[1], yaw[2] * pitch[0], -yaw[2] * pitch[1]};  // yaw * pitch
  const std::array<float, 3> position{0.3f, 1.6f, -2.0f};
  const EyeView v = eye_view_from_xr(rigid_transform(q, position), perspective(-1.1f, 0.9f, -0.95f, 1.05f, 0.1f, 1000.0f));
  EXPECT_EQ(v.pose.position, position);
  EXPECT_NEAR(v.frustum.left, -1.1f, 1e-5f);
  EXPECT_NEAR(v.frustum.right, 0.9f, 1e-5f);
  EXPECT_NEAR(v.frustum.bottom, -0.95f, 1e-5f);
  EXPECT_NEAR(v.frustum.top, 1.05f, 1e-5f);
  // Same rotation (a quaternion and its negative are the same rotation: compare rotated axes).
  for (const std::array<float, 3>& axis : {std::array<float, 3>{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}) {
    const auto a = rotate(v.pose.orientation, axis), b = rotate(q, axis);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(a[i], b[i], 1e-5f);
  }
  // The near and far planes do not matter.
  const EyeView far = eye_view_from_xr(rigid_transform(q, position), perspective(-1.1f, 0.9f, -0.95f, 1.05f, 0.01f, 50.0f));
  EXPECT_NEAR(far.frustum.left, v.frustum.left, 1e-5f);
  EXPECT_NEAR(far.frustum.top, v.frustum.top, 1e-5f);
  // The identity view of a symmetric 90-degree frustum.
  const EyeView id = eye_view_from_xr(rigid_transform({1, 0, 0, 0}, {0, 0, 0}), perspective(-1, 1, -1, 1, 0.1f, 100.0f));
  EXPECT_NEAR(id.pose.orientation[0], 1.0f, 1e-6f);
  EXPECT_NEAR(id.frustum.left, -1.0f, 1e-6f);
  EXPECT_NEAR(id.frustum.top, 1.0f, 1e-6f);
}

TEST(XrView, ScaledTransformsAndNonPerspectiveProjectionsAreRefused) {
  const auto projection = perspective(-1, 1, -1, 1, 0.1f, 100.0f);
  auto scaled = rigid_transform({1, 0, 0, 0}, {0, 0, 0});
  scaled[0] = 2;
  EXPECT_THROW(eye_view_from_xr(scaled, projection), Error);
  auto mirrored = rigid_transform({1, 0, 0, 0}, {0, 0, 0});
  mirrored[10] = -1;
  EXPECT_THROW(eye_view_from_xr(mirrored, projection), Error);
  auto nan = rigid_transform({1, 0, 0, 0}, {0, 0, 0});
  nan[13] = NAN;
  EXPECT_THROW(eye_view_from_xr(nan, projection), Error);
  std::array<float, 16> orthographic{};
  orthographic[0] = orthographic[5] = 1;
  orthographic[10] = -0.02f;
  orthographic[15] = 1;
  try {
    eye_view_from_xr(rigid_transform({1, 0, 0, 0}, {0, 0, 0}), orthographic);
    ADD_FAILURE() << "an orthographic projection was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a perspective projection"), std::string::npos) << e.what();
  }
}

ImageRgba8 filled(int w, int h, Rgba8 colour) { return ImageRgba8(w, h, colour); }

TEST(LinearMean, AveragesInLinearLightAndOneImageIsItself) {
  ImageRgba8 one(3, 2);
  for (int i = 0; i < 6; ++i) one.set(i % 3, i / 3, {uint8_t(i * 40), uint8_t(255 - i * 17), uint8_t(i * 3), 255});
  LinearMean single;
  single.add(one);
  EXPECT_EQ(single.mean(), one);
  // Black and white average to half the light: sRGB code 188, not the 128 of averaging codes.
  LinearMean mean;
  mean.add(filled(2, 2, {0, 0, 0, 255}));
  mean.add(filled(2, 2, {255, 255, 255, 255}));
  EXPECT_EQ(mean.count(), 2u);
  EXPECT_EQ(mean.mean().at(1, 1), (Rgba8{188, 188, 188, 255}));
  EXPECT_THROW(LinearMean().mean(), Error);
}

TEST(SampleAccumulator, ResolvesTheMeanAndStartsAfreshOnReset) {
  master::SampleAccumulator acc;
  EXPECT_EQ(acc.samples(), 0u);
  EXPECT_EQ(acc.next_aa_sample(), 0u);
  EXPECT_THROW(acc.resolve(), Error);
  acc.add(filled(4, 2, {255, 0, 0, 255}));
  acc.add(filled(4, 2, {0, 0, 0, 255}));
  acc.add(filled(4, 2, {0, 0, 0, 255}));
  acc.add(filled(4, 2, {0, 0, 0, 255}));
  EXPECT_EQ(acc.samples(), 4u);
  EXPECT_EQ(acc.next_aa_sample(), 4u);
  EXPECT_EQ(acc.resolve().at(3, 1), (Rgba8{linear_to_srgb8(0.25f), 0, 0, 255}));
  // A frame of another size is refused and changes nothing.
  EXPECT_THROW(acc.add(filled(2, 4, {255, 255, 255, 255})), Error);
  EXPECT_EQ(acc.samples(), 4u);
  EXPECT_EQ(acc.resolve().at(0, 0).r, linear_to_srgb8(0.25f));
  // A new pose: the next frame is the first of the new view, whatever its size.
  acc.reset();
  EXPECT_EQ(acc.samples(), 0u);
  acc.add(filled(2, 4, {10, 20, 30, 255}));
  EXPECT_EQ(acc.resolve(), filled(2, 4, {10, 20, 30, 255}));
}

// A live master accumulates only while the head holds still; the sums (16 bytes a pixel: 32 MB for
// a stereo 2x1024² frame) must not stay with it for the rest of the session.
TEST(SampleAccumulator, ResetGivesTheHeldPosesMemoryBack) {
  master::SampleAccumulator acc;
  acc.add(filled(64, 32, {1, 2, 3, 255}));
  acc.add(filled(64, 32, {4, 5, 6, 255}));
  EXPECT_GE(acc.bytes_held(), size_t(64 * 32 * 16));
  acc.reset();
  EXPECT_EQ(acc.bytes_held(), 0u);
}

}  // namespace
}  // namespace tessera
