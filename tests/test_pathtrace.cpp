// The `pathtrace` mode (Kim & Sung 2021): reprojection geometry between the eyes (Eq. 5), the
// stop probability of Eq. 7, the median filter touching only flagged pixels, progressive
// accumulation keyed by pose and gaze, the plain variant converging to the raytrace mode's direct
// light, host vs PoCL, CPU helper threads, and tessera-render's handling of bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "common/base/error.h"
#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/device_selection.h"
#include "common/image/metrics.h"
#include "common/image/png_io.h"
#include "common/render/camera_setup.h"
#include "common/render/shading_data.h"
#include "common/render/stereo.h"
#include "kernels/integrators/pathtrace.h"
#include "kernels/integrators/pathtrace_resolve.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"
#include "worker/render/pathtrace_device_sums.h"
#include "worker/daemon/frame_setup.h"
#include "worker/render/pathtrace_frame.h"
#include "worker/render/pathtrace_registers.h"
#include "opencl_test_support.h"

namespace tessera {
namespace {

using testing::TempDir;

using testing::opencl_available;

// Packs `settings` (protobuf text) or a shared mesh with its settings into a scene that lives as
// long as the fixture.
struct Shipped {
  std::string settings;  // a file in scene-packer/scenes that composes the whole scene
};
struct Scene {
  TempDir dir{"pathtrace"};
  std::optional<PackedScene> scene;
  explicit Scene(const Shipped& shipped) { pack(testing::source_dir() / "scene-packer/scenes" / shipped.settings, std::nullopt); }
  explicit Scene(const std::string& settings_text) {
    testing::write_text(dir / "s.scene.txtpb", settings_text);
    pack(dir / "s.scene.txtpb", std::nullopt);
  }
  Scene(const std::string& mesh, const std::string& shipped_settings) {
    pack(testing::scene_path(mesh), testing::source_dir() / "scene-packer/scenes" / shipped_settings);
  }
  void pack(const std::filesystem::path& input, std::optional<std::filesystem::path> settings) {
    pack::PackOptions o;
    o.input = input;
    o.settings = settings;
    o.output = dir / "s.tpk";
    o.include_dirs = {testing::shared_dir() / "scenes"};
    o.show_progress = false;
    o.zstd_level = 1;
    pack::pack_scene(o);
    scene.emplace(PackedScene::load(dir / "s.tpk"));
  }
  const PackedScene& get() const { return *scene; }
};

// A wall at z = -5 facing the cameras at the origin, and a small box in front of it.
const char* kWallScene =
    "add_materials { name: \"wall\" diffuse { x: 0.8 y: 0.8 z: 0.8 } }\n"
    "add_materials { name: \"lamp\" type: EMISSIVE emission { x: 4 y: 4 z: 4 } }\n"
    "quad { a { x: -10 y: -10 z: -5 } b { x: 10 y: -10 z: -5 } c { x: 10 y: 10 z: -5 } d { x: -10 y: 10 z: -5 } "
    "material: \"wall\" }\n"
    "box { min { x: 0.2 y: -0.1 z: -2.6 } max { x: 0.4 y: 0.1 z: -2.4 } material: \"wall\" }\n"
    "quad { a { x: -1 y: 3 z: -1 } b { x: -1 y: 3 z: -2 } c { x: 1 y: 3 z: -2 } d { x: 1 y: 3 z: -1 } material: \"lamp\" }\n";

CameraSpec head_at_origin() {
  CameraSpec spec;  // identity orientation: looking down -z, right = +x
  spec.vertical_fov_degrees = 60.0f;
  return spec;
}

PathTraceParams full_tile_params(const CameraParams& cam) {
  PtView view;
  view.eyes = {cam, cam};
  PathTraceSettings pt;
  return PathTraceRenderer::kernel_params(view, pt, {0, 0, cam.width, cam.height});
}

TEST(PathTraceReprojection, PointSeenByBothEyesMapsToTheRightPixel) {
  Scene s(kWallScene);
  const SceneView view = s.get().host_view();
  const RenderSettings rs = default_render_settings(s.get());
  const float ipd = 0.5f;
  const StereoCameras eyes = make_stereo_cameras(head_at_origin(), ipd, 64, 48);
  const PathTraceParams pt = full_tile_params(eyes.left);
  const float focal_px = float(eyes.left.width) / (eyes.left.right - eyes.left.left);
  int checked = 0;
  for (uint32_t y = 2; y < 48; y += 9)
    for (uint32_t x = 20; x < 64; x += 7) {
      const float3 dir = camera_direction(&eyes.left, float(x) + 0.5f, float(y) + 0.5f);
      Hit hit;
      ASSERT_TRUE(kd_intersect_closest(&view, camera_origin(&eyes.left), dir, 0.0f, TS_INFINITY, &hit));
      const float3 p = v3_madd(camera_origin(&eyes.left), dir, hit.t);
      if (std::fabs(p.z + 5.0f) > 1e-3f) continue;  // the box, not the wall
      float xr = 0, yr = 0;
      ASSERT_TRUE(pt_project(&eyes.right, p, &xr, &yr));
      // Same row (the eyes differ only along the right vector); shifted left by f * ipd / depth.
      EXPECT_NEAR(yr, float(y) + 0.5f, 1e-3f);
      EXPECT_NEAR(xr, float(x) + 0.5f - focal_px * ipd / 5.0f, 2e-3f);
      // The right eye's ray through that image position meets the very same point.
      const float3 to_p = v3_normalize(v3_sub(p, camera_origin(&eyes.right)));
      EXPECT_GT(v3_dot(to_p, camera_direction(&eyes.right, xr, yr)), 1.0f - 1e-6f);
      const uint32_t target = pt_reproject_diffuse(&view, &rs, &pt, &eyes.right, p, make_float3(0, 0, 1));
      if (xr >= 0.0f) {
        ++checked;
        EXPECT_EQ(target, uint32_t(std::floor(yr)) * 64u + uint32_t(std::floor(xr)));
      } else {
        EXPECT_EQ(target, TS_PT_NO_TARGET);  // outside the other eye's image
      }
    }
  EXPECT_GT(checked, 20);
}

TEST(PathTraceReprojection, OccludedOrBackFacingPointIsNotWritten) {
  Scene s(kWallScene);
  const SceneView view = s.get().host_view();
  const RenderSettings rs = default_render_settings(s.get());
  const StereoCameras eyes = make_stereo_cameras(head_at_origin(), 0.5f, 64, 48);
  const PathTraceParams pt = full_tile_params(eyes.left);
  // (0.35, 0, -5): the right eye (x = 0.25) sees it through the box at z = -2.5, the left one does not.
  const float3 hidden = make_float3(0.35f, 0.0f, -5.0f);
  EXPECT_FALSE(kd_intersect_any(&view, camera_origin(&eyes.left), v3_sub(hidden, camera_origin(&eyes.left)), 0.0f, 0.999f));
  EXPECT_EQ(pt_reproject_diffuse(&view, &rs, &pt, &eyes.right, hidden, make_float3(0, 0, 1)), TS_PT_NO_TARGET);
  // A neighbour in the clear is written; the same point seen from behind is not.
  const float3 clear = make_float3(-0.6f, 0.0f, -5.0f);
  EXPECT_NE(pt_reproject_diffuse(&view, &rs, &pt, &eyes.right, clear, make_float3(0, 0, 1)), TS_PT_NO_TARGET);
  EXPECT_EQ(pt_reproject_diffuse(&view, &rs, &pt, &eyes.right, clear, make_float3(0, 0, -1)), TS_PT_NO_TARGET);
  // A tile that does not hold the target pixel gets nothing either.
  PathTraceParams left_half = pt;
  left_half.tile_w = 8;
  EXPECT_EQ(pt_reproject_diffuse(&view, &rs, &left_half, &eyes.right, clear, make_float3(0, 0, 1)), TS_PT_NO_TARGET);
}

TEST(PathTraceReprojection, MirrorFirstHitMapsThroughTheMirror) {
  // A mirror at z = -5 facing the eyes and a wall behind them at z = +5 that they see in it (Eq. 6).
  Scene s("add_materials { name: \"wall\" } add_materials { name: \"chrome\" type: MIRROR }\n"
          "quad { a { x: -10 y: -10 z: -5 } b { x: 10 y: -10 z: -5 } c { x: 10 y: 10 z: -5 } d { x: -10 y: 10 z: -5 } "
          "material: \"chrome\" }\n"
          "quad { a { x: -30 y: -30 z: 5 } b { x: -30 y: 30 z: 5 } c { x: 30 y: 30 z: 5 } d { x: 30 y: -30 z: 5 } "
          "material: \"wall\" }\n");
  const SceneView view = s.get().host_view();
  const ShadingData shading = ShadingData::build(s.get());
  const ShadingContext ctx = shading.host_context();
  const RenderSettings rs = default_render_settings(s.get());
  const StereoCameras eyes = make_stereo_cameras(head_at_origin(), 0.5f, 64, 48);
  const PathTraceParams pt = full_tile_params(eyes.left);
  int checked = 0;
  for (uint32_t y = 4; y < 48; y += 10)
    for (uint32_t x = 10; x < 64; x += 9) {
      const float3 dir = camera_direction(&eyes.left, float(x) + 0.5f, float(y) + 0.5f);
      Hit hit;
      ASSERT_TRUE(kd_intersect_closest(&view, camera_origin(&eyes.left), dir, 0.0f, TS_INFINITY, &hit));
      const float3 m = v3_madd(camera_origin(&eyes.left), dir, hit.t);
      const float3 refl = reflect_dir(dir, make_float3(0, 0, 1));
      ASSERT_TRUE(kd_intersect_closest(&view, v3_madd(m, make_float3(0, 0, 1), 1e-3f), refl, 0.0f, TS_INFINITY, &hit));
      const float3 q = v3_madd(v3_madd(m, make_float3(0, 0, 1), 1e-3f), refl, hit.t);
      uint32_t segments = 0;
      const uint32_t target = pt_reproject_mirror(&view, &ctx, &rs, &pt, &eyes.right, m, make_float3(0, 0, 1), q, &segments);
      // The right eye sees q where it sees q's mirror image behind the mirror.
      float xr = 0, yr = 0;
      ASSERT_TRUE(pt_project(&eyes.right, make_float3(q.x, q.y, -10.0f - q.z), &xr, &yr));
      if (xr < 0.0f) {
        EXPECT_EQ(target, TS_PT_NO_TARGET);
        continue;
      }
      ++checked;
      EXPECT_NEAR(yr, float(y) + 0.5f, 1e-2f);
      EXPECT_EQ(target, uint32_t(std::floor(yr)) * 64u + uint32_t(std::floor(xr)));
      EXPECT_GT(segments, 0u);
    }
  EXPECT_GT(checked, 15);
}

class PathTraceVisibility : public ::testing::TestWithParam<bool> {};

// Both ways of telling whether the other eye sees P_c: its first hits of the same sample (the
// default) and a shadow ray (visibility_ray).
TEST_P(PathTraceVisibility, RenderedSamplesLandOnlyWhereTheOtherEyeSeesTheSameSurface) {
  Scene s(kWallScene);
  const RenderSettings base = default_render_settings(s.get());
  PathTraceRenderer renderer(s.get(), {{"host", std::nullopt, 2}, 0});
  const StereoCameras eyes = make_stereo_cameras(head_at_origin(), 0.5f, 48, 36);
  PtView v;
  v.eyes = {eyes.left, eyes.right};
  PathTraceSettings pt;
  pt.gaze_stop = false;
  pt.median = false;
  pt.visibility_ray = GetParam();
  pt.spp = 2;
  RenderSettings rs = base;
  rs.max_depth = 0;
  renderer.render_tile(v, rs, pt, 0, {0, 0, 48, 36});
  const TileAccumulation* acc = renderer.cache().find(0);
  ASSERT_NE(acc, nullptr);
  EXPECT_GT(acc->reprojected_samples(), acc->own_samples() / 2);
  // Each eye's pixels that received a sample see a surface the other eye also sees: the box's
  // silhouette shifts between the eyes, so pixels of the wall hidden from the other eye get none.
  const SceneView view = s.get().host_view();
  for (uint32_t eye = 0; eye < 2; ++eye) {
    const CameraParams& cam = eye ? eyes.right : eyes.left;
    const CameraParams& other = eye ? eyes.left : eyes.right;
    for (uint32_t y = 0; y < 36; ++y)
      for (uint32_t x = 0; x < 48; ++x) {
        const float3 dir = camera_direction(&cam, float(x) + 0.5f, float(y) + 0.5f);
        Hit hit;
        if (!kd_intersect_closest(&view, camera_origin(&cam), dir, 0.0f, TS_INFINITY, &hit)) continue;
        const float3 p = v3_madd(camera_origin(&cam), dir, hit.t);
        const float3 to_other = v3_sub(camera_origin(&other), p);
        const bool hidden = kd_intersect_any(&view, v3_madd(p, v3_normalize(to_other), 1e-3f), to_other, 0.0f, 0.99f);
        // A pixel well inside a hidden region (its 3x3 neighbourhood hidden too) gets nothing.
        bool all_hidden = hidden;
        for (int dy = -1; dy <= 1 && all_hidden; ++dy)
          for (int dx = -1; dx <= 1 && all_hidden; ++dx) {
            const int nx = int(x) + dx, ny = int(y) + dy;
            if (nx < 0 || ny < 0 || nx >= 48 || ny >= 36) continue;
            const float3 d2 = camera_direction(&cam, float(nx) + 0.5f, float(ny) + 0.5f);
            Hit h2;
            if (!kd_intersect_closest(&view, camera_origin(&cam), d2, 0.0f, TS_INFINITY, &h2)) continue;
            const float3 p2 = v3_madd(camera_origin(&cam), d2, h2.t);
            const float3 t2 = v3_sub(camera_origin(&other), p2);
            all_hidden = kd_intersect_any(&view, v3_madd(p2, v3_normalize(t2), 1e-3f), t2, 0.0f, 0.99f);
          }
        if (all_hidden) {
          EXPECT_EQ(acc->pixel(eye, y * 48 + x).rep_n, 0.0f) << "eye " << eye << " pixel " << x << "," << y;
        }
      }
  }
}

INSTANTIATE_TEST_SUITE_P(PathTrace, PathTraceVisibility, ::testing::Values(false, true));

TEST(PathTraceGaze, StopProbabilityFollowsEquation7) {
  CameraSpec spec = head_at_origin();
  PtView v;
  v.eyes[0] = make_camera(spec, 64, 48);
  v.eye_count = 1;
  PathTraceSettings pt;
  pt.p_max = 0.9f;
  PathTraceParams p = PathTraceRenderer::kernel_params(v, pt, {0, 0, 64, 48});
  EXPECT_FLOAT_EQ(p.gaze_x, 32.0f);
  EXPECT_FLOAT_EQ(p.gaze_y, 24.0f);
  EXPECT_FLOAT_EQ(1.0f / p.inv_d_max, 40.0f);  // d_max: centre to a corner
  EXPECT_FLOAT_EQ(pt_stop_probability(&p, 32.0f, 24.0f), 0.0f);
  EXPECT_NEAR(pt_stop_probability(&p, 48.0f, 36.0f), 0.5f, 1e-6f);  // d = 20 = d_max / 2
  EXPECT_NEAR(pt_stop_probability(&p, 32.0f, 36.0f), 0.3f, 1e-6f);  // d = 12
  EXPECT_FLOAT_EQ(pt_stop_probability(&p, 0.0f, 0.0f), 0.9f);       // clamped to P_max
  // Gaze at the top-left corner: d_max is the diagonal.
  v.gaze_u = 0.0f;
  v.gaze_v = 0.0f;
  pt.p_max = 0.3f;
  p = PathTraceRenderer::kernel_params(v, pt, {0, 0, 64, 48});
  EXPECT_FLOAT_EQ(1.0f / p.inv_d_max, 80.0f);
  EXPECT_NEAR(pt_stop_probability(&p, 16.0f, 0.0f), 0.2f, 1e-6f);
  EXPECT_FLOAT_EQ(pt_stop_probability(&p, 64.0f, 48.0f), 0.3f);
  v.gaze_u = 1.5f;
  EXPECT_THROW(PathTraceRenderer::kernel_params(v, pt, {0, 0, 64, 48}), Error);
}

TEST(PathTraceGaze, PathsStopOnlyPastTheDepthThresholdAndMoreAwayFromTheGaze) {
  Scene s("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  PathTraceRenderer renderer(s.get(), {{"host", std::nullopt, 2}, 0});
  CameraSpec spec;
  spec.pose = pose_from_manifest(s.get().manifest().camera());
  spec.vertical_fov_degrees = s.get().manifest().camera().vertical_fov_degrees();
  PtView v;
  v.eyes[0] = make_camera(spec, 32, 32);
  v.eye_count = 1;
  RenderSettings rs = default_render_settings(s.get());
  rs.max_depth = 8;
  rs.light_samples = 1;
  PathTraceSettings pt;
  pt.spp = 16;
  pt.rr_depth = 64;  // no Russian roulette: only the gaze rule ends paths early
  pt.depth_threshold = 8;
  renderer.render_tile(v, rs, pt, 0, {0, 0, 32, 32});
  EXPECT_EQ(renderer.cache().find(0)->stopped_samples(), 0u);  // never deeper than T_d
  pt.depth_threshold = 1;
  renderer.render_tile(v, rs, pt, 0, {0, 0, 32, 32});
  const TileAccumulation* acc = renderer.cache().find(0);
  uint64_t centre = 0, ring = 0, centre_n = 0, ring_n = 0;
  for (uint32_t y = 0; y < 32; ++y)
    for (uint32_t x = 0; x < 32; ++x) {
      const auto& p = acc->pixel(0, y * 32 + x);
      const float d = std::hypot(float(x) + 0.5f - 16.0f, float(y) + 0.5f - 16.0f) / std::hypot(16.0f, 16.0f);
      if (d < 0.15f) centre += p.stopped, centre_n += p.own_n;
      if (d > 0.5f && d < 0.8f) ring += p.stopped, ring_n += p.own_n;
    }
  const double at_gaze = double(centre) / double(centre_n), away = double(ring) / double(ring_n);
  EXPECT_LT(at_gaze, 0.3);
  EXPECT_GT(away, at_gaze + 0.15);
}

// Masters choose image and tile sizes: frame after frame of new tiles must not grow a worker's
// memory without end. Past its budget the cache drops the tiles used longest ago, never those of the
// call in progress.
TEST(PathTraceAccumulation, CacheStaysWithinItsBudget) {
  AccumulationKey key;
  key.eye_count = 2;
  const TileRect rect{0, 0, 16, 16};
  const uint64_t tile_bytes = 16 * 16 * 2 * sizeof(PtPixelAccum);
  AccumulationCache cache(3 * tile_bytes);
  for (uint32_t id = 0; id < 10; ++id) {
    cache.begin_call();
    cache.get(id, key, rect);
    EXPECT_LE(cache.bytes(), 3 * tile_bytes);
  }
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.find(0), nullptr);       // the oldest went first
  EXPECT_NE(cache.find(9), nullptr);
  bool reset = false;
  cache.begin_call();
  cache.get(8, key, rect, &reset);         // still held: it goes on accumulating
  EXPECT_FALSE(reset);
  // One call may need more than the budget at once: nothing of its own is dropped under it.
  cache.begin_call();
  for (uint32_t id = 20; id < 25; ++id) cache.get(id, key, rect);
  for (uint32_t id = 20; id < 25; ++id) EXPECT_NE(cache.find(id), nullptr) << id;
  EXPECT_EQ(cache.size(), 5u);
  cache.erase(20);
  EXPECT_EQ(cache.bytes(), 4 * tile_bytes);
  cache.clear();
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST(PathTraceMedian, FiltersOnlyFlaggedPixels) {
  AccumulationKey key;
  key.eye_count = 1;
  const TileRect rect{0, 0, 6, 5};
  TileAccumulation acc(key, rect);
  PtBatch batch;
  batch.resize(30, 1);
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> value(0.0f, 2.0f);
  for (size_t i = 0; i < 30; ++i) {
    PtPixelOut& o = batch.own[i];
    o.r = value(gen), o.g = value(gen), o.b = value(gen);
    o.samples = 1;
    o.stopped = i % 3 == 0;                 // stopped early ...
    o.specular = i % 3 == 0 && i % 2 == 0;  // ... but some of them first hit a mirror or glass
  }
  acc.merge(batch);
  ResolveOptions plain;
  const std::vector<float> mean = acc.resolve_linear(0, plain);
  ResolveOptions filtered;
  filtered.median = true;
  filtered.median_max_samples = 1;
  const std::vector<float> out = acc.resolve_linear(0, filtered);
  size_t changed = 0;
  for (uint32_t y = 0; y < 5; ++y)
    for (uint32_t x = 0; x < 6; ++x) {
      const size_t i = y * 6 + x;
      const bool flagged = i % 3 == 0 && i % 2 != 0;
      for (int c = 0; c < 3; ++c) {
        std::vector<float> neighbours;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const int nx = int(x) + dx, ny = int(y) + dy;
            if ((dx || dy) && nx >= 0 && ny >= 0 && nx < 6 && ny < 5) neighbours.push_back(mean[3 * (ny * 6 + nx) + c]);
          }
        std::sort(neighbours.begin(), neighbours.end());
        const size_t n = neighbours.size();
        const float median = n % 2 ? neighbours[n / 2] : 0.5f * (neighbours[n / 2 - 1] + neighbours[n / 2]);
        EXPECT_FLOAT_EQ(out[3 * i + c], flagged ? median : mean[3 * i + c]) << x << "," << y;
      }
      changed += flagged;
    }
  EXPECT_EQ(acc.median_pixels(0, filtered), changed);
  // Once a pixel holds more samples than median_max_samples it is left alone.
  acc.merge(batch);
  EXPECT_EQ(acc.resolve_linear(0, filtered), acc.resolve_linear(0, plain));
}

TEST(PathTraceAccumulation, AddsWhileThePoseHoldsAndResetsOnChange) {
  Scene s("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  PathTraceRenderer renderer(s.get(), {{"host", std::nullopt, 2}, 0});
  CameraSpec head;
  head.pose = pose_from_manifest(s.get().manifest().camera());
  head.vertical_fov_degrees = 40.0f;
  auto view_for = [&](const CameraSpec& h, float gu) {
    const StereoCameras c = make_stereo_cameras(h, 64.0f, 16, 12);
    PtView v;
    v.eyes = {c.left, c.right};
    v.gaze_u = gu;
    return v;
  };
  RenderSettings rs = default_render_settings(s.get());
  PathTraceSettings pt;
  pt.spp = 2;
  const TileRect rect{0, 0, 16, 12};
  EXPECT_TRUE(renderer.render_tile(view_for(head, 0.5f), rs, pt, 3, rect).stats.reset);
  auto r = renderer.render_tile(view_for(head, 0.5f), rs, pt, 3, rect);
  EXPECT_FALSE(r.stats.reset);
  EXPECT_DOUBLE_EQ(r.stats.accumulated_spp, 4.0);
  rs.exposure = 2.0f;  // only scales the resolved pixels
  EXPECT_FALSE(renderer.render_tile(view_for(head, 0.5f), rs, pt, 3, rect).stats.reset);
  // Another tile id is a tile of its own.
  EXPECT_TRUE(renderer.render_tile(view_for(head, 0.5f), rs, pt, 4, rect).stats.reset);
  CameraSpec moved = head;
  moved.pose.position[0] += 1.0f;
  r = renderer.render_tile(view_for(moved, 0.5f), rs, pt, 3, rect);
  EXPECT_TRUE(r.stats.reset);
  EXPECT_DOUBLE_EQ(r.stats.accumulated_spp, 2.0);
  EXPECT_TRUE(renderer.render_tile(view_for(moved, 0.25f), rs, pt, 3, rect).stats.reset);  // the gaze moved
  CameraSpec turned = moved;
  turned.pose.orientation = {0.0f, 0.0f, 0.9998477f, 0.0174524f};  // 2 degrees of pitch more
  EXPECT_TRUE(renderer.render_tile(view_for(turned, 0.25f), rs, pt, 3, rect).stats.reset);
  pt.variant = PtVariant::plain;
  EXPECT_TRUE(renderer.render_tile(view_for(turned, 0.25f), rs, pt, 3, rect).stats.reset);
}

// Mean linear radiance of the raytrace mode's direct light (no ambient term) over the image, at
// the path tracer's own sub-pixel positions (the first two random numbers of each sample), so the
// two differ only in how the light is sampled.
std::array<double, 3> raytrace_direct_mean(const PackedScene& scene, const CameraParams& cam, RenderSettings rs,
                                           uint32_t spp) {
  const SceneView view = scene.host_view();
  const ShadingData shading = ShadingData::build(scene);
  const ShadingContext ctx = shading.host_context();
  std::array<double, 3> sum{};
  for (uint32_t y = 0; y < cam.height; ++y)
    for (uint32_t x = 0; x < cam.width; ++x)
      for (uint32_t k = 0; k < spp; ++k) {
        Rng rng = rng_make(y * cam.width + x, k, rs.seed);
        const float jx = rng_next(&rng), jy = rng_next(&rng);
        const float3 dir = camera_direction(&cam, float(x) + jx, float(y) + jy);
        const float3 c = whitted_radiance(&view, &ctx, &rs, camera_origin(&cam), dir, ray_cone_primary(&cam, 0), nullptr, &rng);
        sum[0] += c.x, sum[1] += c.y, sum[2] += c.z;
      }
  for (double& v : sum) v /= double(spp) * cam.width * cam.height;
  return sum;
}

TEST(PathTracePlain, MeanRadianceConvergesToRaytraceDirectLight) {
  Scene s("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");  // diffuse walls and blocks, one light
  CameraSpec spec;
  spec.pose = pose_from_manifest(s.get().manifest().camera());
  spec.vertical_fov_degrees = s.get().manifest().camera().vertical_fov_degrees();
  const CameraParams cam = make_camera(spec, 40, 30);
  RenderSettings rs = default_render_settings(s.get());
  rs.ambient = 0.0f;
  rs.max_depth = 0;  // path tracing without bounces: direct light only
  rs.light_samples = 16;
  const std::array<double, 3> expected = raytrace_direct_mean(s.get(), cam, rs, 32);
  rs.light_samples = 1;
  PathTraceRenderer renderer(s.get(), {{"host", std::nullopt, 2}, 0});
  PtView v;
  v.eyes[0] = cam;
  v.eye_count = 1;
  PathTraceSettings pt;
  pt.variant = PtVariant::plain;
  pt.spp = 32;
  const PtFrameResult frame = render_pathtrace_frame(renderer, v, rs, pt, 0, true);
  std::array<double, 3> got{};
  for (size_t i = 0; i < frame.linear[0].rgb.size(); ++i) got[i % 3] += frame.linear[0].rgb[i];
  for (int c = 0; c < 3; ++c) {
    got[c] /= 40.0 * 30.0;
    EXPECT_NEAR(got[c], expected[c], 0.02 * expected[c] + 1e-4) << "channel " << c;
  }
  // With bounces the image only gets brighter (indirect light adds).
  rs.max_depth = 8;
  const PtFrameResult gi = render_pathtrace_frame(renderer, v, rs, pt, 0, true);
  double gi_sum = 0, direct_sum = got[0] + got[1] + got[2];
  for (float f : gi.linear[0].rgb) gi_sum += f;
  EXPECT_GT(gi_sum / (40.0 * 30.0), 1.1 * direct_sum);
}

TEST(PathTraceLights, EmittersLightOnlyTheSideTheirWindingFronts) {
  // kWallScene's lamp at y = 3 faces down (its winding's normal is -y). A ceiling a hair above it
  // must get nothing from its back: two-sided, 1/d^2 of a millimetre made rare huge samples there.
  Scene s(kWallScene);
  const SceneView view = s.get().host_view();
  const ShadingData shading = ShadingData::build(s.get());
  const ShadingContext ctx = shading.host_context();
  RenderSettings rs = default_render_settings(s.get());
  rs.light_samples = 64;
  auto light_at = [&](float3 p, float3 n) {
    Surface surface{};
    surface.p = p;
    surface.ng = n;
    surface.ns = n;
    surface.front = 1;
    Rng rng = rng_make(7u, 0u, 1u);
    const float3 e = direct_light(&view, &ctx, &rs, &surface, &rng);
    return e.x + e.y + e.z;
  };
  EXPECT_GT(light_at(make_float3(0.0f, 2.0f, -1.5f), make_float3(0, 1, 0)), 0.1f);     // below, facing up
  EXPECT_EQ(light_at(make_float3(0.0f, 3.001f, -1.5f), make_float3(0, -1, 0)), 0.0f);  // above, facing down
}

TEST(PathTracePlain, TilesGiveTheSamePixelsAsOneTile) {
  Scene s("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  CameraSpec head;
  head.pose = pose_from_manifest(s.get().manifest().camera());
  head.vertical_fov_degrees = 40.0f;
  const StereoCameras c = make_stereo_cameras(head, 64.0f, 40, 28);
  PtView v;
  v.eyes = {c.left, c.right};
  const RenderSettings rs = default_render_settings(s.get());
  PathTraceSettings pt;
  pt.variant = PtVariant::plain;
  pt.spp = 2;
  PathTraceRenderer a(s.get(), {{"host", std::nullopt, 2}, 0}), b(s.get(), {{"host", std::nullopt, 1}, 0});
  const PtFrameResult whole = render_pathtrace_frame(a, v, rs, pt, 0);
  const PtFrameResult tiled = render_pathtrace_frame(b, v, rs, pt, 16);
  EXPECT_EQ(tiled.tiles, 6u);
  EXPECT_TRUE(whole.eyes[0] == tiled.eyes[0]);
  EXPECT_TRUE(whole.eyes[1] == tiled.eyes[1]);
  EXPECT_FALSE(whole.eyes[0] == whole.eyes[1]);  // two different eyes
}

TEST(PathTraceDevices, HostAndOpenClAgreeAndCpuHelpersAddSamples) {
  Scene s(Shipped{"pt_teapot.scene.txtpb"});
  CameraSpec head;
  head.pose = pose_from_manifest(s.get().manifest().camera());
  head.vertical_fov_degrees = s.get().manifest().camera().vertical_fov_degrees();
  const StereoCameras c = make_stereo_cameras(head, default_ipd(s.get().manifest()), 40, 30);
  PtView v;
  v.eyes = {c.left, c.right};
  RenderSettings rs = default_render_settings(s.get());
  rs.light_samples = 1;
  PathTraceSettings pt;
  pt.spp = 4;
  pt.median = false;
  PathTraceRenderer host(s.get(), {{"host", std::nullopt, 2}, 0});
  const PtFrameResult a = render_pathtrace_frame(host, v, rs, pt, 0, true);
  if (opencl_available()) {
    PathTraceRenderer pocl(s.get(), {{"cpu", std::nullopt, 0}, 0});
    pt.launch_samples = 2;  // two launches in flight
    const PtFrameResult b = render_pathtrace_frame(pocl, v, rs, pt, 0, true);
    EXPECT_EQ(a.totals.device_pixel_samples, b.totals.device_pixel_samples);
    for (int e = 0; e < 2; ++e) {
      // Same random numbers and code; rare float differences (libm vs OpenCL cos) may turn a path.
      const DiffStats d = diff_stats(a.eyes[e], b.eyes[e], 2);
      EXPECT_LT(d.fraction_over_threshold, 0.03) << "eye " << e;
      EXPECT_LT(mse_rgb(a.eyes[e], b.eyes[e]), 20.0) << "eye " << e;
    }
  }
  // One helper thread beside a one-thread main device: extra samples, the same picture.
  PathTraceRenderer hybrid(s.get(), {{"host", std::nullopt, 1}, 1});
  pt.spp = 8;
  const PtFrameResult h = render_pathtrace_frame(hybrid, v, rs, pt, 0, true);
  EXPECT_GT(h.totals.helper_pixel_samples, 0u);
  EXPECT_GT(h.totals.accumulated_spp, 8.0);
  double mean_a = 0, mean_h = 0;
  for (size_t i = 0; i < a.linear[0].rgb.size(); ++i) mean_a += a.linear[0].rgb[i], mean_h += h.linear[0].rgb[i];
  EXPECT_NEAR(mean_h / mean_a, 1.0, 0.1);
}

// Random launch output of a stereo tile: own sums, stop and mirror flags, reprojected float4s.
PtBatch random_batch(size_t pixels, std::mt19937& gen) {
  std::uniform_real_distribution<float> value(0.0f, 3.0f);
  std::uniform_int_distribution<uint32_t> count(0, 2);
  PtBatch b;
  b.resize(pixels / 2, 2);
  for (size_t i = 0; i < pixels; ++i) {
    PtPixelOut& o = b.own[i];
    o.r = value(gen), o.g = value(gen), o.b = value(gen);
    o.samples = 1 + count(gen);
    o.stopped = std::min(o.samples, count(gen));
    o.specular = count(gen) == 2 && count(gen) == 2;
    o.segments = o.samples * (1 + count(gen));
    const uint32_t sent = count(gen) == 2 ? count(gen) : 0;
    for (int c = 0; c < 3; ++c) b.reproj[4 * i + c] = sent ? value(gen) : 0.0f;
    b.reproj[4 * i + 3] = float(sent);
  }
  return b;
}

TEST(PathTraceDeviceSums, MergeAndResolveGiveTheHostsBits) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL device";
  const cl::Device device = cl::Device::open("cpu");
  cl::DeviceMemoryBudget budget(device);
  PathTraceDeviceAccumulator accumulator(device, budget);
  AccumulationKey key;
  key.eye_count = 2;
  const TileRect rect{3, 5, 37, 23};  // not a multiple of the work-group size
  const size_t pixels = size_t(rect.width) * rect.height * 2;
  TileAccumulation host(key, rect), dev(key, rect, accumulator.make_sums(pixels));
  ASSERT_NE(dev.device_sums(), nullptr);
  std::mt19937 gen(11);
  ResolveOptions options;
  options.median = true;
  options.median_max_samples = 4;  // pixels fall out of the filter as batches add up
  options.exposure = 1.3f;
  for (int k = 0; k < 4; ++k) {
    const PtBatch batch = random_batch(pixels, gen);
    host.merge(batch);
    dev.merge(batch);
    EXPECT_EQ(dev.own_samples(), host.own_samples());
    EXPECT_EQ(dev.reprojected_samples(), host.reprojected_samples());
    EXPECT_EQ(dev.segments(), host.segments());
    EXPECT_EQ(dev.stopped_samples(), host.stopped_samples());
    const PtResolved a = host.resolve(options, true), b = dev.resolve(options, true);
    EXPECT_GT(a.median_pixels, 0u) << "batch " << k;
    EXPECT_EQ(a.median_pixels, b.median_pixels) << "batch " << k;
    for (int e = 0; e < 2; ++e) {
      EXPECT_EQ(a.eyes[e], b.eyes[e]) << "batch " << k << " eye " << e;
      EXPECT_EQ(a.linear[e], b.linear[e]) << "batch " << k << " eye " << e;
    }
  }
  const PtPixelAccum p = host.pixel(1, 100), q = dev.pixel(1, 100);
  EXPECT_EQ(std::memcmp(&p, &q, sizeof p), 0);
}

// Frames of a stereo view through renderers on PoCL: launches read back and merged and resolved on
// the host (the reference), or kept in device memory.
struct DeviceSumsRun {
  Scene scene{Shipped{"pt_teapot.scene.txtpb"}};
  PtView view;
  RenderSettings settings;
  DeviceSumsRun() {
    CameraSpec head;
    head.pose = pose_from_manifest(scene.get().manifest().camera());
    head.vertical_fov_degrees = scene.get().manifest().camera().vertical_fov_degrees();
    const StereoCameras c = make_stereo_cameras(head, default_ipd(scene.get().manifest()), 48, 36);
    view.eyes = {c.left, c.right};
    settings = default_pathtrace_settings(scene.get());
  }
};

TEST(PathTraceDeviceSums, FramesMatchHostMergeOverSeveralFrames) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL device";
  DeviceSumsRun run;
  for (PtVariant variant : {PtVariant::plain, PtVariant::proposed}) {
    PathTraceRenderer host(run.scene.get(), {{"cpu", std::nullopt, 0}, 0, false});
    PathTraceRenderer device(run.scene.get(), {{"cpu", std::nullopt, 0}, 0, true});
    ASSERT_FALSE(host.sums_on_device());
    ASSERT_TRUE(device.sums_on_device());
    PathTraceSettings pt;
    pt.variant = variant;
    pt.spp = 2;
    pt.median_max_samples = 4;  // filtered in the first frames, then not
    for (int frame = 0; frame < 4; ++frame) {
      const PtFrameResult a = render_pathtrace_frame(host, run.view, run.settings, pt, 32);  // edge tiles too
      const PtFrameResult b = render_pathtrace_frame(device, run.view, run.settings, pt, 32);
      EXPECT_EQ(a.totals.reset, frame == 0);
      EXPECT_EQ(b.totals.reset, frame == 0);
      EXPECT_EQ(a.totals.device_pixel_samples, b.totals.device_pixel_samples);
      EXPECT_DOUBLE_EQ(a.totals.accumulated_spp, b.totals.accumulated_spp);
      EXPECT_DOUBLE_EQ(b.totals.accumulated_spp, 2.0 * (frame + 1));
      for (int e = 0; e < 2; ++e) {
        if (variant == PtVariant::plain) {
          EXPECT_TRUE(a.eyes[e] == b.eyes[e]) << "frame " << frame << " eye " << e;
          EXPECT_EQ(a.totals.segments, b.totals.segments);
        } else {
          // Reprojected samples are added atomically in whatever order the work items finish, so
          // sums may differ in the last bit.
          const DiffStats d = diff_stats(a.eyes[e], b.eyes[e], 0);
          EXPECT_LE(d.max_abs_diff, 1) << "frame " << frame << " eye " << e;
          EXPECT_LE(d.fraction_over_threshold, 0.001) << "frame " << frame << " eye " << e;
        }
      }
    }
  }
}

TEST(PathTraceDeviceSums, PoseChangeResetsAndHelpersAddSamples) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL device";
  DeviceSumsRun run;
  PathTraceSettings pt;
  pt.variant = PtVariant::plain;  // no reprojection: bit for bit repeatable
  pt.spp = 2;
  PathTraceRenderer renderer(run.scene.get(), {{"cpu", std::nullopt, 0}, 0, true});
  const TileRect rect{8, 4, 32, 24};
  PtView moved = run.view;
  for (CameraParams& eye : moved.eyes) eye.pos_x += 5.0f;
  EXPECT_TRUE(renderer.render_tile(run.view, run.settings, pt, 7, rect).stats.reset);
  const PtTileResult held = renderer.render_tile(run.view, run.settings, pt, 7, rect);
  EXPECT_FALSE(held.stats.reset);
  EXPECT_DOUBLE_EQ(held.stats.accumulated_spp, 4.0);
  const PtTileResult after_move = renderer.render_tile(moved, run.settings, pt, 7, rect);
  EXPECT_TRUE(after_move.stats.reset);
  EXPECT_DOUBLE_EQ(after_move.stats.accumulated_spp, 2.0);
  // The reset tile holds nothing of the old pose: a fresh renderer's first frame of the new one.
  PathTraceRenderer fresh(run.scene.get(), {{"cpu", std::nullopt, 0}, 0, true});
  const PtTileResult first = fresh.render_tile(moved, run.settings, pt, 7, rect);
  EXPECT_EQ(after_move.eyes[0], first.eyes[0]);
  EXPECT_EQ(after_move.eyes[1], first.eyes[1]);
  // Back to the first pose: started afresh again, equal to that pose's first frame.
  const PtTileResult back = renderer.render_tile(run.view, run.settings, pt, 7, rect);
  EXPECT_TRUE(back.stats.reset);
  EXPECT_EQ(back.eyes[0], fresh.render_tile(run.view, run.settings, pt, 8, rect).eyes[0]);

  // CPU helpers beside the device: their batches are uploaded and merged on the device.
  PathTraceRenderer hybrid(run.scene.get(), {{"cpu", std::nullopt, 0}, 1, true});
  pt.spp = 8;
  pt.launch_samples = 1;
  const PtTileResult h = hybrid.render_tile(run.view, run.settings, pt, 7, rect);
  EXPECT_GT(h.stats.helper_pixel_samples, 0u);
  EXPECT_EQ(h.stats.device_pixel_samples, 8u * rect.width * rect.height * 2);
  EXPECT_GT(h.stats.accumulated_spp, 8.0);
  EXPECT_DOUBLE_EQ(h.stats.accumulated_spp,
                   double(h.stats.device_pixel_samples + h.stats.helper_pixel_samples) / (rect.width * rect.height * 2));
  const PtTileResult reference = fresh.render_tile(run.view, run.settings, pt, 9, rect);
  double mean_h = 0, mean_r = 0;
  for (size_t i = 0; i < h.eyes[0].size(); ++i) mean_h += h.eyes[0][i] & 0xFF, mean_r += reference.eyes[0][i] & 0xFF;
  EXPECT_NEAR(mean_h / mean_r, 1.0, 0.1);
}

// Tile pairs of a batch (one launch over a tile list, the GPU code path, forced on PoCL here) against
// the same pairs rendered one by one on the same device: every pair's pixels, sums and counters,
// over a first call and a second one that adds samples while the view holds.
struct TileBatchRun : DeviceSumsRun {
  std::vector<PtBatchTile> tiles;  // 16-pixel tiles of the 48x36 view (edge tiles 4 pixels tall), shuffled
  uint64_t pixels = 0;
  explicit TileBatchRun(uint32_t eyes) {
    view.eye_count = eyes;
    std::vector<uint32_t> ids(9);
    for (uint32_t i = 0; i < 9; ++i) ids[i] = i;
    std::shuffle(ids.begin(), ids.end(), std::mt19937(5));
    for (uint32_t id : ids) {
      const TileRect rect{id % 3 * 16, id / 3 * 16, 16, id / 3 == 2 ? 4u : 16u};
      tiles.push_back({id, rect, pixels});
      pixels += uint64_t(rect.width) * rect.height * eyes;
    }
  }
};

void expect_batch_equals_tile_by_tile(const PathTraceSettings& pt, uint32_t eyes, bool exact) {
  testing::ScopedEnv gpu_path("TESSERA_CPU_PATHS", "off");  // the batch kernels GPUs run
  TileBatchRun run(eyes);
  PathTraceRenderer batched(run.scene.get(), {{"cpu", std::nullopt, 0}, 0, true});
  PathTraceRenderer single(run.scene.get(), {{"cpu", std::nullopt, 0}, 0, true});
  ASSERT_TRUE(batched.launches_batches());
  for (int call = 0; call < 2; ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    std::vector<uint32_t> out(run.pixels);
    const std::vector<PtTileStats> stats = batched.render_tiles(run.view, run.settings, pt, run.tiles, out);
    ASSERT_EQ(stats.size(), run.tiles.size());
    size_t non_black = 0;
    for (size_t i = 0; i < run.tiles.size(); ++i) {
      const PtBatchTile& t = run.tiles[i];
      const PtTileResult r = single.render_tile(run.view, run.settings, pt, t.tile_id, t.rect);
      const PtTileStats& b = stats[i];
      EXPECT_EQ(b.reset, call == 0);
      EXPECT_EQ(b.device_pixel_samples, r.stats.device_pixel_samples);
      EXPECT_DOUBLE_EQ(b.accumulated_spp, double(pt.spp) * (call + 1));
      EXPECT_DOUBLE_EQ(b.accumulated_spp, r.stats.accumulated_spp);
      EXPECT_EQ(batched.cache().find(t.tile_id)->batches(), single.cache().find(t.tile_id)->batches());
      const size_t n = size_t(t.rect.width) * t.rect.height;
      for (uint32_t e = 0; e < eyes; ++e) {
        const std::vector<uint32_t> got(out.begin() + ptrdiff_t(t.offset + e * n), out.begin() + ptrdiff_t(t.offset + (e + 1) * n));
        for (uint32_t p : got) non_black += (p & 0xFFFFFFu) != 0;
        if (exact) {
          EXPECT_EQ(got, r.eyes[e]) << "tile " << t.tile_id << " eye " << e;
        } else {  // reprojected samples are added atomically in whatever order the work items finish
          for (size_t k = 0; k < n; ++k)
            for (int c = 0; c < 24; c += 8)
              EXPECT_LE(std::abs(int((got[k] >> c) & 0xFF) - int((r.eyes[e][k] >> c) & 0xFF)), 1) << "tile " << t.tile_id;
        }
      }
      if (exact) {
        EXPECT_EQ(b.segments, r.stats.segments);
        EXPECT_EQ(b.stopped, r.stats.stopped);
        EXPECT_EQ(b.median_pixels, r.stats.median_pixels);
        const PtPixelAccum p = batched.cache().find(t.tile_id)->pixel(eyes - 1, n - 1);
        const PtPixelAccum q = single.cache().find(t.tile_id)->pixel(eyes - 1, n - 1);
        EXPECT_EQ(std::memcmp(&p, &q, sizeof p), 0) << "tile " << t.tile_id;
      }
    }
    EXPECT_GT(non_black, run.pixels / 2) << "a blank image";
  }
}

TEST(PathTraceTileBatch, PlainStereoEqualsTileByTile) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL device";
  PathTraceSettings pt;
  pt.variant = PtVariant::plain;
  pt.spp = 3;
  pt.launch_samples = 2;  // two launches a call, the last with one sample
  expect_batch_equals_tile_by_tile(pt, 2, true);
}

TEST(PathTraceTileBatch, ProposedEqualsTileByTile) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL device";
  PathTraceSettings pt;
  pt.spp = 2;
  pt.median_max_samples = 2;  // filtered in the first call, not in the second
  pt.reproject = false;       // gaze stop and median filter, bit for bit
  expect_batch_equals_tile_by_tile(pt, 2, true);
  pt.reproject = true;
  expect_batch_equals_tile_by_tile(pt, 2, false);
}

TEST(PathTraceTileBatch, MonoEqualsTileByTile) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL device";
  PathTraceSettings pt;
  pt.variant = PtVariant::plain;
  pt.spp = 1;
  expect_batch_equals_tile_by_tile(pt, 1, true);
}

// CPU devices (PoCL by default) and renderers with CPU helpers go tile by tile; a batch told to stop
// gives up and drops the accumulations it had started; a tile twice in one request is rendered twice.
TEST(PathTraceTileBatch, WhereBatchesRunAndStopAndRepeatedTiles) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL device";
  {
    DeviceSumsRun run;
    EXPECT_FALSE(PathTraceRenderer(run.scene.get(), {{"cpu", std::nullopt, 0}, 0, true}).launches_batches());
  }
  testing::ScopedEnv gpu_path("TESSERA_CPU_PATHS", "off");
  TileBatchRun run(2);
  EXPECT_FALSE(PathTraceRenderer(run.scene.get(), {{"cpu", std::nullopt, 0}, 1, true}).launches_batches());
  EXPECT_FALSE(PathTraceRenderer(run.scene.get(), {{"cpu", std::nullopt, 0}, 0, false}).launches_batches());
  PathTraceRenderer renderer(run.scene.get(), {{"cpu", std::nullopt, 0}, 0, true});
  PathTraceSettings pt;
  pt.variant = PtVariant::plain;
  std::vector<uint32_t> out(run.pixels);
  renderer.render_tiles(run.view, run.settings, pt, run.tiles, out);
  EXPECT_EQ(renderer.cache().size(), run.tiles.size());
  EXPECT_THROW(renderer.render_tiles(run.view, run.settings, pt, run.tiles, out, [] { return true; }), RenderCanceled);
  EXPECT_EQ(renderer.cache().size(), 0u);
  // The same pair twice: two samples added one after the other, as two render_tile calls would.
  const TileRect rect = run.tiles[0].rect;
  const uint64_t n = uint64_t(rect.width) * rect.height * 2;
  const std::vector<PtBatchTile> twice{{3, rect, 0}, {3, rect, n}};
  std::vector<uint32_t> pair(2 * n);
  const std::vector<PtTileStats> stats = renderer.render_tiles(run.view, run.settings, pt, twice, pair);
  EXPECT_DOUBLE_EQ(stats[0].accumulated_spp, 1.0);
  EXPECT_DOUBLE_EQ(stats[1].accumulated_spp, 2.0);
  PathTraceRenderer single(run.scene.get(), {{"cpu", std::nullopt, 0}, 0, true});
  single.render_tile(run.view, run.settings, pt, 3, rect);
  const PtTileResult second = single.render_tile(run.view, run.settings, pt, 3, rect);
  EXPECT_EQ(std::vector<uint32_t>(pair.begin() + ptrdiff_t(n), pair.begin() + ptrdiff_t(n + n / 2)), second.eyes[0]);
  // Pixels outside the output: one clear error, nothing rendered.
  EXPECT_THROW(renderer.render_tiles(run.view, run.settings, pt, twice, std::span<uint32_t>(pair).first(n)), Error);
}

// TESSERA_PT_WAVES splits a batch's pairs into waves traced one after another: each pair's samples
// are the same, so are its pixels and sums.
TEST(PathTraceTileBatch, WavesEqualTileByTile) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL device";
  PathTraceSettings pt;
  pt.variant = PtVariant::plain;
  pt.spp = 3;
  pt.launch_samples = 1;  // three launches a wave: the previous wave goes while the next traces
  for (const char* waves : {"2", "3"}) {
    SCOPED_TRACE(std::string("waves ") + waves);
    testing::ScopedEnv env("TESSERA_PT_WAVES", waves);
    expect_batch_equals_tile_by_tile(pt, 2, true);
  }
  {  // persistent work-groups take their blocks from counters that each wave starts afresh
    testing::ScopedEnv env("TESSERA_PT_WAVES", "2"), groups("TESSERA_PERSISTENT_GROUPS", "1");
    expect_batch_equals_tile_by_tile(pt, 2, true);
  }
  testing::ScopedEnv gpu_path("TESSERA_CPU_PATHS", "off");
  TileBatchRun run(2);
  testing::ScopedEnv bad("TESSERA_PT_WAVES", "0");
  EXPECT_THROW(PathTraceRenderer(run.scene.get(), {{"cpu", std::nullopt, 0}, 0, true}), Error);
}

// A batch hands every pair over as soon as its pixels are on the host: each pair once, in order,
// with its final pixels and stats, before render_tiles returns. Pairs with gaps between them in the
// output are read back one by one (neighbours may share a read), and the gaps stay untouched. A
// stop after some pairs went still drops the whole batch's accumulations.
TEST(PathTraceTileBatch, PairsAreHandedOverOneByOneInOrder) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL device";
  testing::ScopedEnv gpu_path("TESSERA_CPU_PATHS", "off");
  for (const char* waves : {"1", "2"}) {
    SCOPED_TRACE(std::string("waves ") + waves);
    testing::ScopedEnv env("TESSERA_PT_WAVES", waves);
    TileBatchRun run(2);
    PathTraceSettings pt;
    pt.variant = PtVariant::plain;
    pt.spp = 3;
    pt.launch_samples = 1;
    // The reference: the same pairs side by side in the output.
    PathTraceRenderer reference(run.scene.get(), {{"cpu", std::nullopt, 0}, 0, true});
    std::vector<uint32_t> expected_out(run.pixels);
    reference.render_tiles(run.view, run.settings, pt, run.tiles, expected_out);

    constexpr uint64_t kGap = 5;
    constexpr uint32_t kUntouched = 0xDEADBEEFu;
    std::vector<PtBatchTile> gapped = run.tiles;
    for (size_t i = 0; i < gapped.size(); ++i) gapped[i].offset += kGap * (i + 1);
    std::vector<uint32_t> out(run.pixels + kGap * (gapped.size() + 1), kUntouched);
    PathTraceRenderer renderer(run.scene.get(), {{"cpu", std::nullopt, 0}, 0, true});
    ASSERT_TRUE(renderer.launches_batches());
    std::vector<size_t> order;
    std::vector<std::vector<uint32_t>> seen(gapped.size());
    std::vector<PtTileStats> seen_stats(gapped.size());
    bool returned = false;
    const std::vector<PtTileStats> stats = renderer.render_tiles(
        run.view, run.settings, pt, gapped, out, {}, [&](size_t i, std::span<const uint32_t> pixels, const PtTileStats& s) {
          EXPECT_FALSE(returned);
          order.push_back(i);
          ASSERT_LT(i, gapped.size());
          EXPECT_EQ(pixels.data(), out.data() + gapped[i].offset);
          seen[i].assign(pixels.begin(), pixels.end());
          seen_stats[i] = s;
        });
    returned = true;
    std::vector<size_t> expected_order(gapped.size());
    for (size_t i = 0; i < expected_order.size(); ++i) expected_order[i] = i;
    EXPECT_EQ(order, expected_order);
    size_t non_black = 0;
    for (size_t i = 0; i < gapped.size(); ++i) {
      const PtBatchTile& t = gapped[i];
      const size_t n = size_t(t.rect.width) * t.rect.height * 2;
      const auto at = [](const std::vector<uint32_t>& v, uint64_t offset, size_t count) {
        return std::vector<uint32_t>(v.begin() + ptrdiff_t(offset), v.begin() + ptrdiff_t(offset + count));
      };
      EXPECT_EQ(seen[i], at(out, t.offset, n)) << "tile " << t.tile_id;
      EXPECT_EQ(seen[i], at(expected_out, run.tiles[i].offset, n)) << "tile " << t.tile_id;
      EXPECT_EQ(at(out, t.offset - kGap, kGap), std::vector<uint32_t>(kGap, kUntouched)) << "before tile " << t.tile_id;
      for (uint32_t p : seen[i]) non_black += (p & 0xFFFFFFu) != 0;
      EXPECT_EQ(seen_stats[i].device_pixel_samples, 3u * n);
      EXPECT_EQ(seen_stats[i].device_pixel_samples, stats[i].device_pixel_samples);
      EXPECT_EQ(seen_stats[i].segments, stats[i].segments);
      EXPECT_DOUBLE_EQ(seen_stats[i].accumulated_spp, 3.0);
      EXPECT_GT(seen_stats[i].ms, 0.0);
    }
    EXPECT_EQ(std::vector<uint32_t>(out.end() - ptrdiff_t(kGap), out.end()), std::vector<uint32_t>(kGap, kUntouched));
    EXPECT_GT(non_black, run.pixels / 2) << "a blank image";

    // Stopped in the last launch: with waves, the first wave's pairs have gone by then.
    size_t polls = 0, handed = 0;
    EXPECT_THROW(renderer.render_tiles(run.view, run.settings, pt, run.tiles, expected_out,
                                       [&] { return ++polls == (waves[0] == '1' ? 3u : 6u); },
                                       [&](size_t, std::span<const uint32_t>, const PtTileStats&) { ++handed; }),
                 RenderCanceled);
    EXPECT_EQ(handed, waves[0] == '1' ? 0u : run.tiles.size() / 2);
    EXPECT_EQ(renderer.cache().size(), 0u);
  }
}

// The path tracer's register cap goes only to devices that take NVIDIA's build options, after the
// scene's options; TESSERA_PT_REGISTERS moves it, and 255 leaves the compiler its choice.
TEST(PathTraceRegisters, CapOnlyWhereTheDeviceTakesNvidiaOptions) {
  cl::DeviceInfo nvidia, other;
  nvidia.nv_compiler_options = true;
  EXPECT_EQ(pathtrace_build_options(other, "-D TS_SCENE_FLAGS=3"), "-D TS_SCENE_FLAGS=3");
  EXPECT_EQ(pathtrace_build_options(nvidia, "-D TS_SCENE_FLAGS=3"),
            "-D TS_SCENE_FLAGS=3 -cl-nv-maxrregcount=" + std::to_string(kPathTraceRegisters));
  EXPECT_EQ(pathtrace_build_options(nvidia, ""), "-cl-nv-maxrregcount=" + std::to_string(kPathTraceRegisters));
  {
    testing::ScopedEnv env("TESSERA_PT_REGISTERS", "72");
    EXPECT_EQ(pathtrace_build_options(nvidia, "-D X"), "-D X -cl-nv-maxrregcount=72");
    EXPECT_EQ(pathtrace_build_options(other, "-D X"), "-D X");
  }
  {
    testing::ScopedEnv env("TESSERA_PT_REGISTERS", "255");
    EXPECT_EQ(pathtrace_build_options(nvidia, "-D X"), "-D X");
  }
  testing::ScopedEnv bad("TESSERA_PT_REGISTERS", "15");
  EXPECT_THROW(pathtrace_build_options(nvidia, ""), Error);
}

TEST(TesseraRender, PathtraceOptionsAndBadInput) {
  Scene s("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  TempDir dir("render_pt_cli");
  const std::string bin = (testing::binary_dir() / "worker/tessera-render").string() + " " + (s.dir / "s.tpk").string() + " ";
  const std::string out = (dir / "o.png").string();
  auto expect_error = [&](const std::string& args, const std::string& needle) {
    const auto r = testing::run_command(bin + "-o " + out + " --device host --size 8x8 " + args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_NE(r.output.find(needle), std::string::npos) << args << "\n" << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  };
  expect_error("--mode pathtrace --spp 0", "--spp");
  expect_error("--mode pathtrace --stereo --ipd -1", "--ipd");
  expect_error("--mode pathtrace --gaze 1.5,0.5", "--gaze");
  expect_error("--mode pathtrace --gaze 0.5", "--gaze");
  expect_error("--mode pathtrace --pt-variant fancy", "--pt-variant");
  expect_error("--mode pathtrace --p-max 1.5", "--p-max");
  expect_error("--stereo", "--mode pathtrace");
  expect_error("--mode pathtrace --ipd 0.1", "--stereo");
  EXPECT_FALSE(std::filesystem::exists(out));
  const auto ok = testing::run_command(bin + "-o " + out +
                                       " --device host --size 12x8 --mode pathtrace --stereo --ipd 60 --gaze 0.3,0.6 --spp 2 --json");
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_EQ(read_image(out).width(), 24);  // side by side
  const auto json = nlohmann::json::parse(ok.output);
  EXPECT_EQ(json["pixel_samples"].get<uint64_t>(), 2u * 2u * 12u * 8u);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// The radiance clamp (--clamp): contributions after a path's first diffuse bounce are scaled down
// to the limit, nothing else changes (the same random numbers drive every path).
TEST(PathTraceClamp, LimitsOnlyIndirectContributions) {
  Scene s("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  CameraSpec spec;
  spec.pose = pose_from_manifest(s.get().manifest().camera());
  spec.vertical_fov_degrees = s.get().manifest().camera().vertical_fov_degrees();
  PtView v;
  v.eyes[0] = make_camera(spec, 32, 24);
  v.eye_count = 1;
  RenderSettings rs = default_pathtrace_settings(s.get());
  PathTraceSettings pt;
  pt.variant = PtVariant::plain;
  pt.spp = 4;
  PathTraceRenderer renderer(s.get(), {{"host", std::nullopt, 2}, 0});
  const auto render = [&](float clamp) {
    pt.indirect_clamp = clamp;
    return render_pathtrace_frame(renderer, v, rs, pt, 0, true).linear[0].rgb;
  };
  const std::vector<float> off = render(0.0f), huge = render(1e30f), tight = render(0.05f);
  EXPECT_EQ(off, huge);  // a limit nothing reaches changes no bit
  double sum_off = 0, sum_tight = 0;
  for (size_t i = 0; i < off.size(); ++i) {
    EXPECT_LE(tight[i], off[i] * (1.0f + 1e-5f) + 1e-7f) << "value " << i;
    sum_off += off[i];
    sum_tight += tight[i];
  }
  EXPECT_LT(sum_tight, 0.97 * sum_off);  // bias: clamped energy is lost
  rs.max_depth = 0;                      // direct light only: nothing to clamp
  EXPECT_EQ(render(0.0f), render(0.05f));
  pt.indirect_clamp = -1.0f;
  EXPECT_THROW(PathTraceRenderer::kernel_params(v, pt, {0, 0, 32, 24}), Error);
}

// On the wire the clamp is an additive field: unset (older masters, the benchmarks) means off.
TEST(PathTraceClamp, WireFieldReachesTheWorkersSettings) {
  wire::PathtraceParams p;
  p.set_spp(1);
  EXPECT_EQ(worker::pathtrace_settings(p).indirect_clamp, 0.0f);
  p.set_indirect_clamp(4.0f);
  EXPECT_EQ(worker::pathtrace_settings(p).indirect_clamp, 4.0f);
  p.set_indirect_clamp(-1.0f);
  EXPECT_THROW(worker::pathtrace_settings(p), Error);
}

}  // namespace
}  // namespace tessera
