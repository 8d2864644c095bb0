// Scenes that bring no lights or camera still show something: the packer adds a sun and sky
// ambient (and says so) and a view framing the bounds from outside; settings may give the view as
// look_at; the turntable pose source circles the scene outside its bounds.
#include <gtest/gtest.h>

#include <cmath>

#include "common/base/error.h"
#include "common/render/camera_setup.h"
#include "common/render/shading_data.h"
#include "common/scene/packed_scene.h"
#include "master/pose/orbit_source.h"
#include "master/pose/turntable_source.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"
#include "worker/render/frame_render.h"

namespace tessera {
namespace {

using testing::TempDir;

pack::PackReport pack(const std::filesystem::path& input, const std::filesystem::path& out,
                      std::optional<std::filesystem::path> settings = std::nullopt) {
  pack::PackOptions o;
  o.input = input;
  o.output = out;
  o.settings = settings;
  o.show_progress = false;
  o.zstd_level = 1;
  return pack::pack_scene(o);
}

std::array<float, 3> forward(const Pose& pose) {  // the camera's -z axis
  const auto& q = pose.orientation;
  return {-(2 * (q[1] * q[3] + q[0] * q[2])), -(2 * (q[2] * q[3] - q[0] * q[1])), -(1 - 2 * (q[1] * q[1] + q[2] * q[2]))};
}

// Cosine between the view direction and the direction from the eye to `target`.
float aim(const Pose& pose, const std::array<float, 3>& target) {
  const auto f = forward(pose);
  std::array<float, 3> d{target[0] - pose.position[0], target[1] - pose.position[1], target[2] - pose.position[2]};
  const float len = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  return (f[0] * d[0] + f[1] * d[1] + f[2] * d[2]) / len;
}

bool outside(const tpk::Aabb& b, const std::array<float, 3>& p) {
  return p[0] < b.min().x() || p[0] > b.max().x() || p[1] < b.min().y() || p[1] > b.max().y() || p[2] < b.min().z() ||
         p[2] > b.max().z();
}

std::array<float, 3> centre(const tpk::Aabb& b) {
  return {0.5f * (b.min().x() + b.max().x()), 0.5f * (b.min().y() + b.max().y()), 0.5f * (b.min().z() + b.max().z())};
}

TEST(SceneDefaults, LightlessSceneGetsASunSkyAndAFramingView) {
  TempDir dir("defaults");
  const auto report = pack(testing::scene_path("teapot/teapot_lowpoly.obj"), dir / "t.tpk");
  const auto& m = report.manifest;
  ASSERT_EQ(m.directional_lights_size(), 1);
  EXPECT_EQ(m.point_lights_size(), 0);
  EXPECT_LT(m.directional_lights(0).direction().y(), -0.5f);  // from above
  EXPECT_GT(m.sky_ambient(), 0.0f);
  ASSERT_EQ(report.notes.size(), 2u);
  EXPECT_NE(report.notes[0].find("no lights: added a default sun"), std::string::npos);
  EXPECT_NE(report.notes[1].find("no camera"), std::string::npos);
  const Pose pose = pose_from_manifest(m.camera());
  EXPECT_TRUE(outside(m.bounds(), pose.position));
  EXPECT_GT(aim(pose, centre(m.bounds())), 0.9999f);

  // Lit and framed: most of the middle of the image is the teapot, and it is not dark.
  const PackedScene scene = PackedScene::load(dir / "t.tpk");
  CameraSpec spec;
  spec.pose = pose;
  spec.vertical_fov_degrees = m.camera().vertical_fov_degrees();
  auto host = make_tile_renderer(scene, {"host", std::nullopt, 0});
  const RenderSettings settings = default_render_settings(scene);
  EXPECT_FLOAT_EQ(settings.ambient, m.sky_ambient());
  const ImageRgba8 image = render_frame(*host, make_camera(spec, 64, 48), settings, 64);
  const Rgba8 sky = image.at(0, 0);
  int object = 0;
  double luma = 0;
  for (int y = 16; y < 32; ++y)
    for (int x = 20; x < 44; ++x) {
      const Rgba8 p = image.at(x, y);
      if (p.r == sky.r && p.g == sky.g && p.b == sky.b) continue;
      ++object;
      luma += 0.2126 * p.r + 0.7152 * p.g + 0.0722 * p.b;
    }
  EXPECT_GT(object, 16 * 24 / 2);
  EXPECT_GT(luma / std::max(object, 1), 70.0);
}

TEST(SceneDefaults, ScenesWithLightsKeepThem) {
  TempDir dir("defaults_lit");
  const auto report = pack(testing::scene_path("cornell_box/cornell_box.obj"), dir / "c.tpk",
                           testing::source_dir() / "scene-packer/scenes/cornell_box.scene.txtpb");
  EXPECT_EQ(report.manifest.directional_lights_size(), 0);  // the emissive ceiling quad lights it
  EXPECT_EQ(report.manifest.sky_ambient(), 0.0f);
  EXPECT_TRUE(report.notes.empty());
}

TEST(SceneDefaults, SettingsLookAt) {
  TempDir dir("look_at");
  testing::write_text(dir / "s.scene.txtpb",
                      "look_at { eye { x: 4 y: 2 z: 5 } target { x: 0 y: 0.4 z: 0 } }\n"
                      "camera { vertical_fov_degrees: 45 }\n");
  const auto report = pack(testing::scene_path("teapot/teapot_lowpoly.obj"), dir / "t.tpk", dir / "s.scene.txtpb");
  const Pose pose = pose_from_manifest(report.manifest.camera());
  EXPECT_FLOAT_EQ(pose.position[0], 4.0f);
  EXPECT_FLOAT_EQ(pose.position[2], 5.0f);
  EXPECT_GT(aim(pose, {0, 0.4f, 0}), 0.9999f);
  EXPECT_FLOAT_EQ(report.manifest.camera().vertical_fov_degrees(), 45.0f);
  EXPECT_EQ(report.notes.size(), 1u);  // the sun, but no note about the camera

  testing::write_text(dir / "both.scene.txtpb",
                      "look_at { eye { x: 4 y: 2 z: 5 } target { x: 0 y: 0 z: 0 } }\n"
                      "camera { position { x: 1 y: 1 z: 1 } qw: 1 }\n");
  EXPECT_THROW(pack(testing::scene_path("teapot/teapot_lowpoly.obj"), dir / "b.tpk", dir / "both.scene.txtpb"), Error);
  testing::write_text(dir / "same.scene.txtpb", "look_at { eye { x: 1 y: 1 z: 1 } target { x: 1 y: 1 z: 1 } }\n");
  EXPECT_THROW(pack(testing::scene_path("teapot/teapot_lowpoly.obj"), dir / "s.tpk", dir / "same.scene.txtpb"), Error);
  EXPECT_FALSE(std::filesystem::exists(dir / "b.tpk"));
}

TEST(SceneDefaults, TurntableCirclesOutsideTheBounds) {
  tpk::Manifest m;
  m.mutable_bounds()->mutable_min()->set_x(-1);
  m.mutable_bounds()->mutable_min()->set_y(0);
  m.mutable_bounds()->mutable_min()->set_z(-2);
  m.mutable_bounds()->mutable_max()->set_x(1);
  m.mutable_bounds()->mutable_max()->set_y(1);
  m.mutable_bounds()->mutable_max()->set_z(2);
  m.mutable_camera()->set_vertical_fov_degrees(60);
  const float half_diagonal = 0.5f * std::sqrt(4.0f + 1.0f + 16.0f);
  const auto distance = [&](const Pose& p) {
    const auto c = centre(m.bounds());
    return std::hypot(p.position[0] - c[0], p.position[1] - c[1], p.position[2] - c[2]);
  };
  master::TurntableSource turntable(m, 8, 1.0f, 0.0f), far(m, 8, 2.0f, 0.0f);
  for (int i = 0; i < 8; ++i) {
    const Pose p = turntable.next()->pose, q = far.next()->pose;
    EXPECT_TRUE(outside(m.bounds(), p.position)) << "pose " << i;
    EXPECT_GT(distance(p), 2.0f * half_diagonal);  // the bounding sphere fills 60 degrees
    EXPECT_GT(aim(p, centre(m.bounds())), 0.9999f);
    EXPECT_NEAR(distance(q), 2.0f * distance(p), 1e-3f);
  }
  EXPECT_THROW(master::TurntableSource(m, 8, 0.0f, 0.0f), Error);
  // The orbit may now leave the bounds too.
  master::OrbitSource orbit(m, 4, 1.5f);
  EXPECT_TRUE(outside(m.bounds(), orbit.next()->pose.position));
}

}  // namespace
}  // namespace tessera
