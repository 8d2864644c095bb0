// The scene's sun replaced for a frame (common/render/sun_override.h): values are checked and the
// direction normalised; the first directional light takes it (or it is added); the raytrace image
// changes, the shadow on the catcher moves to the other side, and going back to the scene's sun
// gives the scene's image again, on the host and OpenCL builds; tessera-render --sun does the same.
#include <gtest/gtest.h>

#include <cmath>

#include "aux_test_scenes.h"
#include "cluster_test_support.h"
#include "common/base/error.h"
#include "common/image/png_io.h"
#include "common/render/aux_outputs.h"
#include "common/render/shading_data.h"
#include "common/render/sun_override.h"
#include "common/scene/packed_scene.h"
#include "opencl_test_support.h"
#include "worker/render/aux_frame.h"
#include "worker/render/frame_render.h"
#include "worker/render/pathtrace_renderer.h"

namespace tessera {
namespace {

using testing::TempDir;

constexpr uint32_t kSize = 48;

TEST(SunOverride, ValuesAreCheckedAndTheFirstDirectionalLightTakesIt) {
  const SunOverride sun = checked_sun_override({0, -2, 0}, {1, 2, 3});
  EXPECT_EQ(sun.direction, (std::array<float, 3>{0, -1, 0}));
  const auto refused = [](std::array<float, 3> d, std::array<float, 3> e, const std::string& needle) {
    try {
      checked_sun_override(d, e);
      ADD_FAILURE() << "accepted: " << needle;
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
    }
  };
  refused({0, 0, 0}, {1, 1, 1}, "sun direction is zero");
  refused({NAN, -1, 0}, {1, 1, 1}, "sun direction is not finite");
  refused({0, -1, INFINITY}, {1, 1, 1}, "sun direction is not finite");
  refused({0, -1, 0}, {-0.1f, 1, 1}, "outside [0, 1e4]");
  refused({0, -1, 0}, {1, 2e4f, 1}, "outside [0, 1e4]");
  refused({0, -1, 0}, {1, 1, NAN}, "outside [0, 1e4]");

  const std::vector<LightGpu> scene = {{TS_LIGHT_POINT, 1, 2, 3, 9, 9, 9, 0},
                                       {TS_LIGHT_DIRECTIONAL, 0, -1, 0, 5, 5, 5, 0},
                                       {TS_LIGHT_DIRECTIONAL, 1, 0, 0, 6, 6, 6, 0}};
  const auto lit = lights_with_sun(scene, sun);
  ASSERT_EQ(lit.size(), 3u);
  EXPECT_EQ(lit[0].x, 1.0f);   // the point light stays
  EXPECT_EQ(lit[1].y, -1.0f);  // the first directional light is the sun now
  EXPECT_EQ(lit[1].g, 2.0f);
  EXPECT_EQ(lit[2].r, 6.0f);  // the second one stays
  const auto added = lights_with_sun(std::span(scene).first(1), sun);
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(added[1].type, TS_LIGHT_DIRECTIONAL);
  EXPECT_EQ(added[1].b, 3.0f);
  EXPECT_EQ(lights_with_sun(scene, std::nullopt).size(), 3u);
}

// The sphere scene's sun travels along +x; the override along -x puts the shadow on the other side.
void expect_the_shadow_moves(TileRenderer& renderer, const PackedScene& scene, const char* backend) {
  const CameraParams camera = testing::down_camera(kSize);
  const RenderSettings settings = default_render_settings(scene);
  AuxRequest transparent;
  transparent.transparent = true;
  const AuxSettings aux = aux_settings(transparent, scene.manifest());
  const auto alpha = [&](const std::vector<uint32_t>& words, float x) {
    return int(aux_alpha_of(words[testing::down_pixel(kSize, x, 0.0f)]));
  };
  const ImageRgba8 own = render_frame(renderer, camera, settings, 16);
  const auto own_aux = render_aux_frame(renderer, {camera}, settings, aux, 16);
  EXPECT_EQ(alpha(own_aux, 1.5f), 204) << backend;
  EXPECT_EQ(alpha(own_aux, -1.5f), 0) << backend;

  renderer.set_sun(checked_sun_override({-1, -1, 0}, {2, 2, 2}));
  const ImageRgba8 moved = render_frame(renderer, camera, settings, 16);
  const auto moved_aux = render_aux_frame(renderer, {camera}, settings, aux, 16);
  EXPECT_EQ(alpha(moved_aux, 1.5f), 0) << backend;
  EXPECT_EQ(alpha(moved_aux, -1.5f), 204) << backend;
  EXPECT_FALSE(moved == own) << backend;
  // The sphere's lit side turns with the sun: its +x side (pixel of x = 0.8), in its own shade before, is lit now.
  const size_t plus_x = testing::down_pixel(kSize, 0.8f, 0.0f);
  EXPECT_GT(moved.at(int(plus_x % kSize), int(plus_x / kSize)).r, own.at(int(plus_x % kSize), int(plus_x / kSize)).r) << backend;

  renderer.set_sun(std::nullopt);
  EXPECT_TRUE(render_frame(renderer, camera, settings, 16) == own) << backend;
}

TEST(SunOverride, TheShadowMovesTheRightWayAndTheSceneSunComesBack) {
  TempDir dir("sun_override");
  const PackedScene scene = PackedScene::load(testing::pack_shapes(dir.path(), "sphere", testing::kSphereScene));
  auto host = make_tile_renderer(scene, {"host", std::nullopt, 2});
  expect_the_shadow_moves(*host, scene, "host");
  if (!testing::opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  auto pocl = make_tile_renderer(scene, {"cpu", std::nullopt, 0});
  expect_the_shadow_moves(*pocl, scene, "OpenCL");
}

TEST(SunOverride, AddedToASceneWithoutASun) {
  TempDir dir("sun_added");
  // Only a point light, far to the side and dim: the added sun from straight above lights the sphere's top.
  std::string text = testing::kSphereScene;
  text.replace(text.find("directional_lights"), text.find("shadow_catcher") - text.find("directional_lights"),
               "point_lights { position { x: 50 y: 1 z: 0 } intensity { x: 1 y: 1 z: 1 } }\n");
  const PackedScene scene = PackedScene::load(testing::pack_shapes(dir.path(), "dark", text));
  auto host = make_tile_renderer(scene, {"host", std::nullopt, 2});
  const CameraParams camera = testing::down_camera(kSize);
  const RenderSettings settings = default_render_settings(scene);
  const size_t top = testing::down_pixel(kSize, 0.0f, 0.0f);
  const ImageRgba8 dark = render_frame(*host, camera, settings, 16);
  host->set_sun(checked_sun_override({0, -1, 0}, {3, 3, 3}));
  const ImageRgba8 lit = render_frame(*host, camera, settings, 16);
  EXPECT_GT(int(lit.at(int(top % kSize), int(top / kSize)).r), int(dark.at(int(top % kSize), int(top / kSize)).r) + 50);
}

TEST(SunOverride, PathTracerStartsItsSamplesAfreshUnderANewSun) {
  TempDir dir("sun_pathtrace");
  const PackedScene scene = PackedScene::load(testing::pack_shapes(dir.path(), "sphere", testing::kSphereScene));
  PathTraceRenderer renderer(scene, {{"host", std::nullopt, 2}, 0});
  PtView view;
  view.eyes[0] = testing::down_camera(16);
  view.eye_count = 1;
  PathTraceSettings pt;
  pt.spp = 2;
  const RenderSettings settings = default_pathtrace_settings(scene);
  const TileRect tile{0, 0, 16, 16};
  const PtTileResult first = renderer.render_tile(view, settings, pt, 0, tile);
  EXPECT_TRUE(first.stats.reset);
  EXPECT_FALSE(renderer.render_tile(view, settings, pt, 0, tile).stats.reset);  // samples add up
  renderer.set_sun(checked_sun_override({-1, -1, 0}, {2, 2, 2}));
  const PtTileResult moved = renderer.render_tile(view, settings, pt, 0, tile);
  EXPECT_TRUE(moved.stats.reset);
  EXPECT_NE(moved.eyes[0], first.eyes[0]);
}

TEST(TesseraRenderSun, MovesTheShadowAndRefusesBadValues) {
  TempDir dir("sun_render");
  const auto tpk = testing::pack_shapes(dir.path(), "sphere", testing::kSphereScene);
  const std::string base = testing::render_binary().string() + " " + tpk.string() + " --size 48x48 --device host --pose " +
                           testing::kDownPose + " --fov 33.398488 --background transparent";
  const auto r = testing::run_command(base + " --sun -1,-1,0,2,2,2 -o " + (dir / "sun.png").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const ImageRgba8 image = read_image(dir / "sun.png");
  const auto alpha = [&](float x) {
    const size_t p = testing::down_pixel(kSize, x, 0.0f);
    return int(image.at(int(p % kSize), int(p / kSize)).a);
  };
  EXPECT_EQ(alpha(-1.5f), 204);
  EXPECT_EQ(alpha(1.5f), 0);
  for (const auto& [bad, needle] : std::vector<std::pair<std::string, std::string>>{
           {"0,0,0,1,1,1", "sun direction is zero"}, {"0,-1,0,1,1", "expected 6 comma-separated numbers"},
           {"0,-1,0,1,1,20000", "outside [0, 1e4]"}, {"0,-1,nan,1,1,1", "not a finite number"}}) {
    const auto refused = testing::run_command_split(base + " --sun " + bad + " -o " + (dir / "bad.png").string());
    EXPECT_EQ(refused.exit_code, 2) << bad << "\n" << refused.err;
    EXPECT_NE(refused.err.find(needle), std::string::npos) << refused.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "bad.png"));
  }
}

}  // namespace
}  // namespace tessera
