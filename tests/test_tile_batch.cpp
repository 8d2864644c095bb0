// Tiles rendered as one batch (one launch over a tile list on OpenCL devices) give exactly the
// pixels of tiles rendered one by one, for both eyes, edge tiles and any order; a batch gives up
// when asked to stop.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/cl/device_selection.h"
#include "common/net/tile_grid.h"
#include "common/render/camera_setup.h"
#include "common/render/shading_data.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"
#include "worker/render/tile_renderer.h"
#include "opencl_test_support.h"

namespace tessera {
namespace {

using testing::TempDir;

using testing::opencl_available;

struct Cornell {
  TempDir dir{"tile_batch"};
  std::filesystem::path path = dir / "cornell.tpk";
  Cornell() {
    pack::PackOptions o;
    o.input = testing::scene_path("cornell_box/cornell_box.obj");
    o.settings = testing::source_dir() / "scene-packer/scenes/cornell_box.scene.txtpb";
    o.output = path;
    o.show_progress = false;
    o.zstd_level = 1;
    pack::pack_scene(o);
  }
};

// Both eyes of a stereo frame of 2 x (w x h) in `tile`-pixel tiles, as one batch in shuffled order,
// against every tile rendered on its own.
void expect_batch_equals_single_tiles(TileRenderer& renderer, const PackedScene& scene, uint32_t w, uint32_t h, uint32_t tile) {
  CameraSpec spec;
  spec.pose = pose_from_manifest(scene.manifest().camera());
  spec.vertical_fov_degrees = scene.manifest().camera().vertical_fov_degrees();
  std::array<CameraParams, 2> cameras{};
  spec.eye_offset = -20.0f;
  cameras[0] = make_camera(spec, w, h);
  spec.eye_offset = 20.0f;
  cameras[1] = make_camera(spec, w, h);
  const RenderSettings settings = default_render_settings(scene);
  const net::TileGrid grid(w, h, tile, 2);
  std::vector<uint32_t> order(grid.tile_count());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(7));

  std::vector<BatchTile> tiles;
  uint64_t total = 0;
  for (uint32_t id : order) {
    const net::TileSpec s = grid.tile(id);
    tiles.push_back({{s.x0, s.y0, s.width, s.height}, s.eye, total});
    total += uint64_t(s.width) * s.height;
  }
  auto batch = renderer.host_pixels(total);
  const BatchTiming timing = renderer.render_raytrace_batch(cameras, settings, tiles, batch->pixels, {});
  EXPECT_GT(timing.launch_ms + timing.readback_ms, 0.0);

  size_t non_black = 0;
  for (const BatchTile& t : tiles) {
    std::vector<uint32_t> single(size_t(t.rect.width) * t.rect.height);
    renderer.render_raytrace(cameras[t.eye], settings, t.rect, single);
    for (size_t i = 0; i < single.size(); ++i) {
      ASSERT_EQ(batch->pixels[t.offset + i], single[i])
          << "tile at " << t.rect.x0 << "," << t.rect.y0 << " eye " << t.eye << " pixel " << i;
      non_black += (single[i] & 0xffffffu) != 0;
    }
  }
  EXPECT_GT(non_black, total / 2) << "a blank image";
}

TEST(TileBatch, HostBatchEqualsSingleTiles) {
  Cornell c;
  const PackedScene scene = PackedScene::load(c.path);
  auto host = make_tile_renderer(scene, {"host", std::nullopt, 1});
  expect_batch_equals_single_tiles(*host, scene, 70, 45, 16);
}

TEST(TileBatch, OpenClOneLaunchEqualsSingleTiles) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  Cornell c;
  const PackedScene scene = PackedScene::load(c.path);
  {
    auto cpu_paths = make_tile_renderer(scene, {"cpu", std::nullopt, 0});  // a launch per tile on CPU devices
    expect_batch_equals_single_tiles(*cpu_paths, scene, 70, 45, 16);
  }
  testing::ScopedEnv gpu_path("TESSERA_CPU_PATHS", "off");  // the one-launch kernel GPUs run
  auto gpu_code = make_tile_renderer(scene, {"cpu", std::nullopt, 0});
  expect_batch_equals_single_tiles(*gpu_code, scene, 70, 45, 16);
}

TEST(TileBatch, ABatchGivesUpWhenToldToStop) {
  Cornell c;
  const PackedScene scene = PackedScene::load(c.path);
  std::vector<std::unique_ptr<TileRenderer>> renderers;
  renderers.push_back(make_tile_renderer(scene, {"host", std::nullopt, 1}));
  if (opencl_available()) renderers.push_back(make_tile_renderer(scene, {"cpu", std::nullopt, 0}));
  CameraSpec spec;
  spec.pose = pose_from_manifest(scene.manifest().camera());
  const std::array<CameraParams, 2> cameras{make_camera(spec, 32, 32), make_camera(spec, 32, 32)};
  const std::vector<BatchTile> tiles{{{0, 0, 16, 16}, 0, 0}, {{16, 0, 16, 16}, 0, 256}};
  for (auto& renderer : renderers) {
    auto out = renderer->host_pixels(512);
    EXPECT_THROW(renderer->render_raytrace_batch(cameras, default_render_settings(scene), tiles, out->pixels, [] { return true; }),
                 RenderCanceled);
  }
}

}  // namespace
}  // namespace tessera
