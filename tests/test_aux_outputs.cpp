// Depth and coverage beside the colour (kernels/integrators/primary_aux.h): the inverse depth of a
// known plane and box is the analytic one on the host and OpenCL builds; the shadow catcher shows
// a sphere's shadow exactly where it falls, weighted by the lights' irradiance; requests and scene
// settings are checked; tessera-render writes the depth PNG, the transparent RGBA and the AR
// composite.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "aux_test_scenes.h"
#include "cluster_test_support.h"
#include "common/base/error.h"
#include "common/image/png_io.h"
#include "common/render/aux_outputs.h"
#include "common/render/shading_data.h"
#include "common/scene/packed_scene.h"
#include "opencl_test_support.h"
#include "worker/render/aux_frame.h"
#include "worker/render/depth_png.h"
#include "worker/render/frame_render.h"

namespace tessera {
namespace {

using testing::TempDir;

constexpr uint32_t kSize = 64;
constexpr float kNear = 2.0f;

std::vector<uint32_t> aux_of(TileRenderer& renderer, const PackedScene& scene, const AuxRequest& request,
                             uint32_t size = kSize) {
  return render_aux_frame(renderer, {testing::down_camera(size)}, default_render_settings(scene),
                          aux_settings(request, scene.manifest()), 16);
}

AuxRequest depth_request() {
  AuxRequest r;
  r.depth = true;
  r.depth_near = kNear;
  return r;
}

AuxRequest transparent_request() {
  AuxRequest r;
  r.transparent = true;
  return r;
}

// Every pixel of the box scene: depth 9 where the ray meets the box's top, 10 (the floor) where it
// passes beside the box (a band of 0.05 around the top's edges is left out).
void expect_box_scene_depth(const std::vector<uint32_t>& aux, const char* backend) {
  int checked = 0;
  for (uint32_t py = 0; py < kSize; ++py)
    for (uint32_t px = 0; px < kSize; ++px) {
      const float sx = -0.3f + 0.6f * (float(px) + 0.5f) / float(kSize), sy = 0.3f - 0.6f * (float(py) + 0.5f) / float(kSize);
      const float tx = std::fabs(9.0f * sx), tz = std::fabs(9.0f * sy);  // where the ray crosses y = 1
      const uint32_t word = aux[py * kSize + px];
      ASSERT_EQ(aux_alpha_of(word), 255) << backend << " pixel " << px << "," << py << ": the floor covers the view";
      int expected;
      if (tx < 0.45f && tz < 0.45f) expected = testing::expected_inverse_depth(kNear, 9.0f);
      else if (tx > 0.55f || tz > 0.55f) expected = testing::expected_inverse_depth(kNear, 10.0f);
      else continue;
      EXPECT_NEAR(int(aux_inverse_depth_of(word)), expected, 1) << backend << " pixel " << px << "," << py;
      ++checked;
    }
  EXPECT_GT(checked, int(kSize * kSize) * 9 / 10) << backend;
}

TEST(AuxOutputs, DepthOfAPlaneAndABoxIsTheAnalyticInverseDepth) {
  TempDir dir("aux_depth");
  const PackedScene scene = PackedScene::load(testing::pack_shapes(dir.path(), "box", testing::kBoxScene));
  auto host = make_tile_renderer(scene, {"host", std::nullopt, 2});
  const auto host_aux = aux_of(*host, scene, depth_request());
  expect_box_scene_depth(host_aux, "host");
  // Depth along the viewing axis, not the distance: the floor is 13107 at the centre and the corners alike.
  EXPECT_EQ(aux_inverse_depth_of(host_aux[0]), aux_inverse_depth_of(host_aux[kSize * kSize - 1]));
  if (!testing::opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  auto pocl = make_tile_renderer(scene, {"cpu", std::nullopt, 0});
  const auto pocl_aux = aux_of(*pocl, scene, depth_request());
  expect_box_scene_depth(pocl_aux, "OpenCL");
  for (size_t i = 0; i < host_aux.size(); ++i)
    ASSERT_LE(std::abs(int(aux_inverse_depth_of(host_aux[i])) - int(aux_inverse_depth_of(pocl_aux[i]))), 1) << i;
}

TEST(AuxOutputs, ShadowCatcherShowsTheShadowOnlyWhereItFalls) {
  TempDir dir("aux_shadow");
  const PackedScene scene = PackedScene::load(testing::pack_shapes(dir.path(), "sphere", testing::kSphereScene));
  ASSERT_TRUE(scene.manifest().has_shadow_catcher());
  const auto check = [&](TileRenderer& renderer, const char* backend) {
    const auto aux = aux_of(renderer, scene, transparent_request());
    const auto alpha = [&](float x, float z) { return int(aux_alpha_of(aux[testing::down_pixel(kSize, x, z)])); };
    // The sphere itself; the ground at (1.5, 0, 0), 0.35 from the shadow's axis (radius 1): a full
    // shadow of opacity 0.8; the lit ground on the other side and off to the side: nothing.
    EXPECT_EQ(alpha(0.0f, 0.0f), 255) << backend;
    EXPECT_EQ(alpha(1.5f, 0.0f), 204) << backend;
    EXPECT_EQ(alpha(1.0f, 0.6f), 204) << backend;
    EXPECT_EQ(alpha(-1.5f, 0.0f), 0) << backend;
    EXPECT_EQ(alpha(1.5f, 2.0f), 0) << backend;
    EXPECT_EQ(alpha(2.6f, 0.0f), 0) << backend;  // past the shadow's far end (x = 1 + sqrt(2))
    // No depth where only the catcher is hit.
    EXPECT_EQ(aux_inverse_depth_of(aux[testing::down_pixel(kSize, 1.5f, 0.0f)]), 0);
    // An opaque frame has no catcher: coverage alone.
    const auto opaque = aux_of(renderer, scene, depth_request());
    EXPECT_EQ(aux_alpha_of(opaque[testing::down_pixel(kSize, 1.5f, 0.0f)]), 0) << backend;
    // The request's plane and opacity replace the scene's: on y = -2 the shadow is centred at x = 3
    // (x from 1.59 to 4.41). The camera sees ground point (x, -2, z) through the pixel of (x / 1.2, 0, z / 1.2).
    AuxRequest lower = transparent_request();
    lower.catcher_height = -2.0f;
    lower.shadow_opacity = 0.5f;
    const auto moved = render_aux_frame(renderer, {testing::down_camera(kSize)}, default_render_settings(scene),
                                        aux_settings(lower, scene.manifest()), 16);
    const auto moved_alpha = [&](float x, float z) { return int(aux_alpha_of(moved[testing::down_pixel(kSize, x / 1.2f, z / 1.2f)])); };
    EXPECT_EQ(moved_alpha(2.5f, 0.0f), 128) << backend;
    EXPECT_EQ(moved_alpha(3.3f, 0.5f), 128) << backend;
    EXPECT_EQ(moved_alpha(2.5f, 2.0f), 0) << backend;
    EXPECT_EQ(moved_alpha(-2.0f, 0.0f), 0) << backend;
  };
  auto host = make_tile_renderer(scene, {"host", std::nullopt, 2});
  check(*host, "host");
  if (!testing::opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  auto pocl = make_tile_renderer(scene, {"cpu", std::nullopt, 0});
  check(*pocl, "OpenCL");
}

TEST(AuxOutputs, LightsCountByTheirIrradianceOnTheGround) {
  TempDir dir("aux_two_lights");
  // A second sun of the same irradiance straight down: at (1.5, 0, 0) it is not blocked, and it
  // gives the ground 1 / cos 45 degrees times the first one's irradiance.
  const PackedScene scene = PackedScene::load(testing::pack_shapes(
      dir.path(), "sphere2",
      std::string(testing::kSphereScene) + "directional_lights { direction { x: 0 y: -1 z: 0 } radiance { x: 2 y: 2 z: 2 } }\n"));
  auto host = make_tile_renderer(scene, {"host", std::nullopt, 2});
  const auto aux = aux_of(*host, scene, transparent_request());
  const double share = std::sqrt(0.5) / (std::sqrt(0.5) + 1.0);
  EXPECT_NEAR(int(aux_alpha_of(aux[testing::down_pixel(kSize, 1.5f, 0.0f)])), 0.8 * share * 255.0, 1.0);
  // Beside the sphere on -x both suns reach the ground.
  EXPECT_EQ(aux_alpha_of(aux[testing::down_pixel(kSize, -1.5f, 0.0f)]), 0);
}

TEST(AuxOutputs, RequestsAreCheckedAndTheSceneFillsTheGaps) {
  tpk::Manifest none, scene;
  scene.mutable_shadow_catcher()->set_height(0.25f);
  scene.mutable_shadow_catcher()->set_opacity(0.4f);
  const auto refused = [](AuxRequest r, const std::string& needle) {
    try {
      aux_settings(r, tpk::Manifest{});
      ADD_FAILURE() << "accepted: " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  AuxRequest r = depth_request();
  r.depth_near = 0;
  refused(r, "depth_near must be finite and positive");
  r.depth_near = -1;
  refused(r, "depth_near");
  r.depth_near = NAN;
  refused(r, "depth_near");
  r.depth_near = INFINITY;
  refused(r, "depth_near");
  r = transparent_request();
  r.catcher_height = NAN;
  refused(r, "shadow_catcher_height is not finite");
  r = transparent_request();
  r.shadow_opacity = 1.5f;
  refused(r, "shadow_opacity must lie in [0, 1]");
  // Transparent without a plane anywhere: none. The scene's plane and opacity; the request's over them.
  EXPECT_EQ(aux_settings(transparent_request(), none).has_catcher, 0u);
  const AuxSettings from_scene = aux_settings(transparent_request(), scene);
  EXPECT_EQ(from_scene.has_catcher, 1u);
  EXPECT_FLOAT_EQ(from_scene.catcher_height, 0.25f);
  EXPECT_FLOAT_EQ(from_scene.shadow_opacity, 0.4f);
  r = transparent_request();
  r.catcher_height = -1.0f;
  const AuxSettings own = aux_settings(r, none);
  EXPECT_FLOAT_EQ(own.catcher_height, -1.0f);
  EXPECT_FLOAT_EQ(own.shadow_opacity, kDefaultShadowOpacity);
  // Depth alone (opaque): no plane even where the scene has one.
  EXPECT_EQ(aux_settings(depth_request(), scene).has_catcher, 0u);
}

TEST(AuxOutputs, InverseDepthTravelsAsOneZstdFrameOfLittleEndianWords) {
  const std::vector<uint32_t> words = {aux_pack(0, 0), aux_pack(1, 255), aux_pack(0xABCD, 255), aux_pack(65535, 7)};
  const auto encoded = encode_inverse_depth(words, 0);
  const auto q = decode_inverse_depth(encoded, words.size());
  EXPECT_EQ(q, (std::vector<uint16_t>{0, 1, 0xABCD, 65535}));
  EXPECT_THROW(decode_inverse_depth(encoded, words.size() + 1), Error);
  EXPECT_EQ(transparent_pixel(0xFF336699u, aux_pack(5, 255)), 0xFF336699u);
  EXPECT_EQ(transparent_pixel(0xFF336699u, aux_pack(0, 0)), 0u);
  EXPECT_EQ(transparent_pixel(0xFF336699u, aux_pack(0, 100)), 100u << 24);
  EXPECT_FLOAT_EQ(depth_of_inverse(13107, 2.0f), 2.0f * 65535.0f / 13107.0f);
  EXPECT_TRUE(std::isinf(depth_of_inverse(0, 2.0f)));
}

TEST(AuxOutputs, PackerCopiesTheShadowCatcherAndRefusesBadOnes) {
  TempDir dir("aux_pack");
  const PackedScene scene = PackedScene::load(testing::pack_shapes(dir.path(), "sphere", testing::kSphereScene));
  EXPECT_FLOAT_EQ(scene.manifest().shadow_catcher().height(), 0.0f);
  EXPECT_FLOAT_EQ(scene.manifest().shadow_catcher().opacity(), 0.8f);
  const std::string shapes = "add_materials { name: \"a\" } sphere { radius: 1 material: \"a\" }\n";
  for (const auto& [bad, needle] : std::vector<std::pair<std::string, std::string>>{
           {"shadow_catcher { height: nan }", "shadow_catcher height must be a finite number"},
           {"shadow_catcher { height: 0 opacity: 1.5 }", "shadow_catcher opacity must lie in [0, 1]"},
           {"shadow_catcher { height: 0 opacity: -0.1 }", "shadow_catcher opacity"}}) {
    try {
      testing::pack_shapes(dir.path(), "bad", shapes + bad);
      ADD_FAILURE() << "packed: " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
}

// tessera-render: --depth-out is the aux pass's depth, --background transparent keeps the opaque
// colour wherever alpha is 255, and --composite leaves the photo alone outside objects and shadows.
TEST(TesseraRenderAux, DepthOutTransparentAndCompositeOverAPhoto) {
  TempDir dir("aux_render");
  const auto tpk = testing::pack_shapes(dir.path(), "sphere", testing::kSphereScene);
  const std::string base = testing::render_binary().string() + " " + tpk.string() + " --size 64x64 --device host --pose " +
                           testing::kDownPose + " --fov 33.398488 --tile 32";
  auto run = [&](const std::string& options) {
    const auto r = testing::run_command(base + " " + options);
    EXPECT_EQ(r.exit_code, 0) << r.output;
  };
  run("-o " + (dir / "opaque.png").string() + " --depth-out " + (dir / "depth.png").string() + " --depth-near 2");
  run("-o " + (dir / "clear.png").string() + " --background transparent");
  ImageRgba8 photo(64, 64);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) photo.set(x, y, Rgba8{uint8_t(x * 4), uint8_t(y * 4), 90, 255});
  write_png(dir / "photo.png", photo);
  run("-o " + (dir / "ar.png").string() + " --background transparent --composite " + (dir / "photo.png").string());

  const ImageRgba8 opaque = read_image(dir / "opaque.png"), clear = read_image(dir / "clear.png"), ar = read_image(dir / "ar.png");
  const DepthImage depth = read_depth_png(dir / "depth.png");
  const PackedScene scene = PackedScene::load(tpk);
  auto host = make_tile_renderer(scene, {"host", std::nullopt, 1});
  const auto aux = aux_of(*host, scene, depth_request());
  ASSERT_EQ(depth.q.size(), aux.size());
  // The pose's camera equals down_camera but for the last bits of its axes: silhouettes may move a pixel.
  int depth_differs = 0;
  for (size_t i = 0; i < aux.size(); ++i)
    depth_differs += std::abs(int(depth.q[i]) - int(aux_inverse_depth_of(aux[i]))) > 1;
  EXPECT_LE(depth_differs, 20);
  int covered = 0, shadowed = 0, photo_pixels = 0;
  for (size_t i = 0; i < aux.size(); ++i) {
    const int x = int(i % 64), y = int(i / 64);
    const Rgba8 c = clear.at(x, y);
    if (c.a == 255) {
      ++covered;
      EXPECT_EQ(c, opaque.at(x, y)) << x << "," << y;
      EXPECT_EQ(ar.at(x, y), opaque.at(x, y)) << x << "," << y;
    } else {
      EXPECT_EQ(c.r | c.g | c.b, 0) << x << "," << y;
      if (c.a == 0) {
        ++photo_pixels;
        EXPECT_EQ(ar.at(x, y), photo.at(x, y)) << x << "," << y;
      } else {
        ++shadowed;
        EXPECT_LT(ar.at(x, y).r + ar.at(x, y).g + ar.at(x, y).b, photo.at(x, y).r + photo.at(x, y).g + photo.at(x, y).b + 1);
      }
    }
  }
  EXPECT_GT(covered, 100);
  EXPECT_GT(shadowed, 50);
  EXPECT_GT(photo_pixels, 1000);
  EXPECT_GT(depth.q[testing::down_pixel(64, 0.0f, 0.0f)], 0);
}

TEST(TesseraRenderAux, MisuseGivesOneErrorLineAndNoFile) {
  TempDir dir("aux_render_cli");
  const auto tpk = testing::pack_shapes(dir.path(), "sphere", testing::kSphereScene);
  const std::string base = testing::render_binary().string() + " " + tpk.string() + " --size 16x16 --device host -o " +
                           (dir / "out.png").string();
  const auto refused = [&](const std::string& options, const std::string& needle) {
    const auto r = testing::run_command_split(base + " " + options);
    EXPECT_EQ(r.exit_code, 2) << options << "\n" << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "out.png")) << options;
  };
  refused("--background glass", "--background");
  refused("--shadow-catcher 0", "--shadow-catcher needs --background transparent");
  refused("--background transparent --shadow-catcher 0,2", "the opacity must lie in (0, 1]");
  refused("--background transparent --shadow-catcher x", "--shadow-catcher");
  refused("--depth-near 1", "--depth-near needs --depth-out");
  refused("--depth-out d.png --depth-near -1", "--depth-near must be a positive number");
  refused("--mode vct --depth-out d.png", "--depth-out needs --mode raytrace");
  refused("--composite p.png", "--composite needs --background transparent");
  // A photograph of another size: one runtime error line, nothing written.
  write_png(dir / "small.png", ImageRgba8(8, 8));
  const auto r = testing::run_command_split(base + " --background transparent --composite " + (dir / "small.png").string());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("the photograph is 8x8 but the render is 16x16"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out.png"));
}

}  // namespace
}  // namespace tessera
