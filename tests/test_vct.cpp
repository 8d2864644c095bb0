// The vct mode (voxel cone tracing): voxelization of a known box, mip levels, cones through empty and
// filled space, relighting against voxelizing again, host vs OpenCL (PoCL), tiles, and the command
// lines' handling of bad input. Small grids (16 - 64) keep it quick.
#include <gtest/gtest.h>

#include <cmath>
#include <sys/stat.h>
#include <nlohmann/json.hpp>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/cl/device_selection.h"
#include "common/image/metrics.h"
#include "common/image/png_io.h"
#include "common/render/camera_setup.h"
#include "common/render/shading_data.h"
#include "common/render/vct_options.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"
#include "worker/render/opencl_vct_renderer.h"
#include "worker/render/vct_renderer.h"
#include "opencl_test_support.h"
#include "vct_test_support.h"

namespace tessera {
namespace {

using testing::TempDir;

using testing::opencl_available;
using testing::expect_same_grids;

// Axis-aligned box [lo, hi]^3 with outward-facing triangles.
std::string box_obj(float lo, float hi) {
  std::string s;
  for (int i = 0; i < 8; ++i)
    s += "v " + std::to_string(i & 1 ? hi : lo) + " " + std::to_string(i & 2 ? hi : lo) + " " + std::to_string(i & 4 ? hi : lo) + "\n";
  // faces (1-based), counter-clockwise seen from outside
  s += "f 1 5 7 3\nf 2 4 8 6\nf 1 2 6 5\nf 3 7 8 4\nf 1 3 4 2\nf 5 6 8 7\n";
  return s;
}

struct ObjScene {
  TempDir dir{"vct"};
  PackedScene scene;
  ObjScene(const std::string& obj, const std::string& settings) : scene(pack(obj, settings)) {}

 private:
  PackedScene pack(const std::string& obj, const std::string& settings) {
    testing::write_text(dir / "scene.obj", obj);
    testing::write_text(dir / "scene.scene.txtpb", settings);
    pack::PackOptions o;
    o.input = dir / "scene.obj";
    o.output = dir / "scene.tpk";
    o.quantize = {false, false, false};
    o.show_progress = false;
    o.zstd_level = 1;
    pack::pack_scene(o);
    return PackedScene::load(dir / "scene.tpk");
  }
};

struct PackedFile {
  TempDir dir{"vct_pack"};
  std::filesystem::path path;
  PackedFile(const std::string& scene, const std::string& settings) {
    pack::PackOptions o;
    o.input = testing::scene_path(scene);
    o.output = path = dir / "scene.tpk";
    o.settings = testing::source_dir() / "scene-packer/scenes" / settings;
    o.max_texture_size = 64;
    o.show_progress = false;
    o.zstd_level = 1;
    pack::pack_scene(o);
  }
};

const char* kLitBox = "point_lights { position { x: 7.5 y: 30 z: 7.5 } intensity { x: 900 y: 900 z: 900 } }\n";

std::unique_ptr<VctRenderer> host_renderer(const PackedScene& scene, uint32_t grid, bool solid,
                                           const std::optional<std::vector<VctLight>>& lights = std::nullopt) {
  return make_vct_renderer(scene, {"host", std::nullopt, 0}, {grid, solid}, lights);
}

bool on_shell(uint32_t x, uint32_t y, uint32_t z, uint32_t n) {
  return x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1;
}

TEST(VctVoxelize, KnownBoxFillsTheExpectedVoxels) {
  // A box [0, 15]^3 on a 16^3 grid: voxels are 1 unit, their centres on the integers, so each face lies
  // in one layer of voxel centres and the surface is exactly the grid's outer shell.
  ObjScene box(box_obj(0, 15), kLitBox);
  const cpu::VctGridData g = host_renderer(box.scene, 16, false)->read_grid();
  EXPECT_FLOAT_EQ(g.params.voxel_size, 1.0f);
  EXPECT_EQ(g.params.level_count, 5u);
  EXPECT_EQ(g.level_voxels(0), 16u * 16 * 16 - 14u * 14 * 14);
  for (uint32_t z = 0; z < 16; ++z)
    for (uint32_t y = 0; y < 16; ++y)
      for (uint32_t x = 0; x < 16; ++x) ASSERT_EQ(g.word_at(0, x, y, z) != 0, on_shell(x, y, z, 16)) << x << "," << y << "," << z;
  // The active-voxel list holds exactly the occupied voxels; the middle of a face has the face's normal
  // and the default material's albedo (0.8 linear = 231 in sRGB).
  const VctGrid view = g.view();
  for (uint32_t i = 0; i < g.level_voxels(0); ++i) {
    const uint32_t p = g.positions[i];
    ASSERT_EQ(vct_lookup(&view, 0, vct_pos_x(p), vct_pos_y(p), vct_pos_z(p)), i);
  }
  const uint32_t face = vct_lookup(&view, 0, 0, 8, 7);
  const float3 n = vct_decode_normal(g.normal[face]);
  EXPECT_NEAR(std::fabs(n.x), 1.0f, 1e-3f);
  EXPECT_NEAR(vct_decode_offset(g.normal[face]), 0.0f, 0.01f);  // the face passes through the voxel centre
  EXPECT_EQ(g.albedo[face] & 0xFFu, 231u);
  EXPECT_EQ(g.albedo[face] >> 24, TS_VCT_KIND_SURFACE);

  // Filled: every voxel, the inside ones marked interior.
  const cpu::VctGridData s = host_renderer(box.scene, 16, true)->read_grid();
  EXPECT_EQ(s.level_voxels(0), 16u * 16 * 16);
  const VctGrid sv = s.view();
  EXPECT_EQ(s.albedo[vct_lookup(&sv, 0, 8, 8, 8)] >> 24, TS_VCT_KIND_INTERIOR);
  EXPECT_EQ(s.albedo[vct_lookup(&sv, 0, 0, 8, 8)] >> 24, TS_VCT_KIND_SURFACE);
  EXPECT_TRUE(vct_decode_voxel(s.word_at(0, 8, 8, 8)).interior);
}

TEST(VctMips, LevelsAverageTheirChildren) {
  ObjScene box(box_obj(0, 15), kLitBox);
  for (bool solid : {false, true}) {
    const cpu::VctGridData g = host_renderer(box.scene, 16, solid)->read_grid();
    const VctGrid view = g.view();
    for (uint32_t l = 1; l < g.params.level_count; ++l) {
      const uint32_t res = 16u >> l;
      for (uint32_t z = 0; z < res; ++z)
        for (uint32_t y = 0; y < res; ++y)
          for (uint32_t x = 0; x < res; ++x) {
            float alpha = 0, weight = 0;
            float3 sum = make_float3(0, 0, 0);
            for (uint32_t k = 0; k < 8; ++k) {
              const VctVoxel c = vct_fetch(&view, l - 1, int(2 * x + (k & 1)), int(2 * y + ((k >> 1) & 1)), int(2 * z + (k >> 2)));
              alpha += c.alpha / 8;
              if (c.alpha > 0 && !c.interior) {
                weight += c.alpha;
                sum = v3_madd(sum, c.radiance, c.alpha);
              }
            }
            const VctVoxel p = vct_fetch(&view, l, int(x), int(y), int(z));
            ASSERT_NEAR(p.alpha, alpha, 0.005f + 0.01f * alpha) << "level " << l;
            if (weight > 0) {
              const float3 mean = v3_scale(sum, 1 / weight);
              const float tolerance = 0.04f * std::max({mean.x, mean.y, mean.z}) + 1e-6f;
              ASSERT_NEAR(p.radiance.x, mean.x, tolerance) << "level " << l;
              ASSERT_NEAR(p.radiance.y, mean.y, tolerance);
              ASSERT_NEAR(p.radiance.z, mean.z, tolerance);
            }
          }
    }
    // A level-1 voxel in the middle of a face holds 4 of its 8 children; the top level is one voxel
    // holding the mean of the whole grid.
    if (!solid) {
      EXPECT_NEAR(vct_fetch(&view, 1, 0, 4, 4).alpha, 0.5f, 0.005f);
      EXPECT_NEAR(vct_fetch(&view, 4, 0, 0, 0).alpha, float(16 * 16 * 16 - 14 * 14 * 14) / 4096.0f, 0.01f);
      EXPECT_GT(vct_fetch(&view, 1, 4, 7, 4).radiance.y, 0.0f);  // the top face is lit
    }
  }
}

TEST(VctCone, EmptyGridGivesNoOcclusion) {
  // A grid with no voxels at all: every cone passes.
  ObjScene floor("v 0 0 0\nv 16 0 0\nv 16 0 16\nv 0 0 16\nf 1 4 3 2\n", kLitBox);
  const SceneView scene_view = floor.scene.host_view();
  VctGridParams params = cpu::vct_grid_geometry(scene_view, 32);
  const std::vector<uint32_t> no_counts(2 * TS_VCT_MAX_LEVELS, 0), empty_map(cpu::vct_total_cells(params), 0);
  const std::vector<uint32_t> empty_dense(params.dense_offset[params.level_count], 0);
  cpu::vct_set_offsets(params, no_counts);
  VctGrid empty;
  empty.p = params;
  empty.map = empty_map.data();
  empty.bricks = nullptr;
  empty.radiance = nullptr;
  empty.dense = empty_dense.data();
  const float3 up = make_float3(0, 1, 0), o = make_float3(8, 1, 8);
  for (const float3 dir : {up, make_float3(0, -1, 0), v3_normalize(make_float3(1, -1, 0))}) {
    float ao_occ = -1, occ = -1, ao = -1;
    float3 radiance, indirect;
    vct_diffuse_cone(&empty, o, dir, 100.0f, 100.0f, &ao_occ, &radiance, &occ);
    EXPECT_EQ(occ, 0.0f);
    EXPECT_EQ(ao_occ, 0.0f);
    EXPECT_EQ(radiance.x + radiance.y + radiance.z, 0.0f);
    EXPECT_EQ(vct_shadow_cone(&empty, o, dir, std::sin(2.5f * float(M_PI) / 180), 100.0f, 0.0f), 1.0f);
    vct_diffuse_cones(&empty, o, dir, 100.0f, 100.0f, 1, &ao, &indirect);
    EXPECT_EQ(ao, 1.0f);
    EXPECT_EQ(indirect.x + indirect.y + indirect.z, 0.0f);
  }
  // With the floor voxelized, cones up from just above it see (nearly) nothing, cones down the lit floor.
  const cpu::VctGridData g = host_renderer(floor.scene, 32, false)->read_grid();
  const VctGrid view = g.view();
  float ao = -1;
  float3 indirect;
  vct_diffuse_cones_lifted(&view, o, up, 100.0f, 100.0f, 1, VctFrameSettings{}.side_lift, &ao, &indirect);
  EXPECT_GT(ao, 0.9f);  // a flat open floor barely occludes the lifted side cones
  EXPECT_GT(vct_shadow_cone(&view, o, up, 0.05f, 100.0f, 0.0f), 0.97f);
  vct_diffuse_cones(&view, o, make_float3(0, -1, 0), 100.0f, 100.0f, 1, &ao, &indirect);
  EXPECT_LT(ao, 0.9f);
  EXPECT_GT(indirect.x, 0.0f);
}

TEST(VctCone, EnclosedPointIsFullyOccluded) {
  // Inside a filled box every cone starts in occupied voxels.
  ObjScene box(box_obj(0, 31), kLitBox);
  const cpu::VctGridData g = host_renderer(box.scene, 32, true)->read_grid();
  const VctGrid view = g.view();
  const float3 centre = make_float3(15.5f, 15.5f, 15.5f);
  for (const float3 n : {make_float3(0, 1, 0), make_float3(1, 0, 0), v3_normalize(make_float3(1, -2, 3))}) {
    float ao = -1;
    float3 indirect;
    vct_diffuse_cones(&view, centre, n, 4.0f, 4.0f, 1, &ao, &indirect);
    EXPECT_NEAR(ao, 0.0f, 0.01f);
    EXPECT_NEAR(vct_shadow_cone(&view, centre, n, 0.05f, 100.0f, 0.0f), 0.0f, 0.01f);
  }
  // The hollow box leaks through its averaged mip levels (papers/001 Fig. 6.1), yet still occludes.
  const cpu::VctGridData h = host_renderer(box.scene, 32, false)->read_grid();
  const VctGrid hv = h.view();
  float ao = -1;
  float3 indirect;
  vct_diffuse_cones(&hv, centre, make_float3(0, 1, 0), 100.0f, 100.0f, 1, &ao, &indirect);
  EXPECT_GT(ao, 0.05f);
  EXPECT_LT(ao, 0.95f);
}

// A soft-shadow cone up through a thin slab: with one fixed step sequence the occlusion swings with
// the receiver's distance from the slab (the bands under the Cornell spheres); averaged over jittered
// starts, as the pixels of a shadow are, the swings shrink.
TEST(VctCone, JitteredShadowConesAverageOutTheBands) {
  ObjScene slab("v 0 0 0\nv 32 0 0\nv 32 0 32\nv 0 0 32\nv 0 -32 0\nv 32 -32 0\nv 32 -32 32\nv 0 -32 32\n"
                "f 1 4 3 2\nf 5 6 7 8\n",
                kLitBox);
  const cpu::VctGridData g = host_renderer(slab.scene, 32, false)->read_grid();
  const VctGrid view = g.view();
  const float sin_half = std::sin(2.5f * float(M_PI) / 180);
  auto swing = [&](int jitters) {
    double total = 0, previous = -1;
    for (float d = 3.0f; d <= 9.0f; d += 0.125f) {
      double shadow = 0;
      for (int j = 0; j < jitters; ++j)
        shadow += vct_shadow_cone(&view, make_float3(16.3f, -d, 16.6f), make_float3(0, 1, 0), sin_half, 100.0f,
                                  jitters == 1 ? 0.0f : (float(j) + 0.5f) / float(jitters));
      shadow /= jitters;
      EXPECT_LT(shadow, 0.9) << "the slab occludes at distance " << d;
      if (previous >= 0) total += std::fabs(shadow - previous);
      previous = shadow;
    }
    return total;
  };
  const double fixed = swing(1), jittered = swing(32);
  EXPECT_GT(fixed, 0.2) << "the fixed steps band";
  EXPECT_LT(jittered, 0.5 * fixed) << "fixed " << fixed << ", jittered " << jittered;
}

// Mirror and glass get a warning in the vct mode; diffuse scenes none.
TEST(VctRender, SpecularMaterialsAreNamedInAWarning) {
  ObjScene diffuse(box_obj(0, 15), kLitBox);
  EXPECT_EQ(vct_specular_warning(diffuse.scene), "");
  ObjScene mirror(box_obj(0, 15), std::string(kLitBox) + "materials { name: \"default\" type: MIRROR diffuse { x: 1 y: 1 z: 1 } }\n");
  const std::string w = vct_specular_warning(mirror.scene);
  EXPECT_NE(w.find("1 mirror and 0 glass"), std::string::npos) << w;
}

// The dense arrays cones read hold exactly what the bricks hold, and sampling them gives the same bits.
TEST(VctGrid, DenseArraysMatchTheBricks) {
  PackedFile cornell("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  const PackedScene scene = PackedScene::load(cornell.path);
  std::vector<std::string> devices{"host"};
  if (opencl_available()) devices.push_back("cpu");
  for (const auto& device : devices) {
    const cpu::VctGridData g = make_vct_renderer(scene, {device, std::nullopt, 0}, {32, true})->read_grid();
    const VctGridParams& p = g.params;
    ASSERT_EQ(g.dense.size(), p.dense_offset[p.level_count]) << device;
    for (uint32_t b = 0; b < g.level_bricks(0); ++b) {
      const uint4 rec = g.bricks[b];
      ASSERT_EQ(g.dense[p.dense_offset[0] + 2 * rec.w], rec.x) << device;
      ASSERT_EQ(g.dense[p.dense_offset[0] + 2 * rec.w + 1], rec.y) << device;
    }
    for (uint32_t l = 1; l < p.level_count; ++l) {
      uint64_t occupied = 0;
      for (uint32_t i = p.dense_offset[l]; i < p.dense_offset[l + 1]; ++i) occupied += g.dense[i] != 0;
      EXPECT_EQ(occupied, g.level_voxels(l)) << device << " level " << l;
      for (uint32_t i = p.voxel_offset[l]; i < p.voxel_offset[l + 1]; ++i) {
        const uint32_t w = g.positions[i];
        ASSERT_EQ(g.dense[vct_dense_index(&p, l, vct_pos_x(w), vct_pos_y(w), vct_pos_z(w))], g.radiance[i]) << device;
      }
    }
  }
  const cpu::VctGridData g = host_renderer(scene, 32, false)->read_grid();
  const VctGrid view = g.view();
  uint32_t state = 12345;
  auto next = [&] { return float((state = state * 1664525u + 1013904223u) >> 8) / float(1u << 24); };
  for (int i = 0; i < 2000; ++i) {
    const uint32_t level = uint32_t(i) % g.params.level_count;
    const float res = float(g.params.resolution >> level);
    const float3 q = make_float3(next() * (res + 2) - 1, next() * (res + 2) - 1, next() * (res + 2) - 1);
    const float4 bricks = vct_sample_level_bricks(&view, level, q);
    const float4 sample = vct_sample_level(&view, level, q);
    ASSERT_EQ(vct_sample_occupancy_level(&view, level, q), bricks.w) << "level " << level;
    ASSERT_EQ(sample.x, bricks.x);
    ASSERT_EQ(sample.y, bricks.y);
    ASSERT_EQ(sample.z, bricks.z);
    ASSERT_EQ(sample.w, bricks.w);
  }
}

TEST(VctRelight, EqualsVoxelizingAgain) {
  PackedFile cornell("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  const PackedScene scene = PackedScene::load(cornell.path);
  std::vector<VctLight> moved = vct_lights_for_scene(scene);
  ASSERT_FALSE(moved.empty());
  move_vct_light(moved, 0, {150.0f, 500.0f, 200.0f});
  std::vector<std::string> devices{"host"};
  if (opencl_available()) devices.push_back("cpu");
  for (const auto& device : devices) {
    auto relit = make_vct_renderer(scene, {device, std::nullopt, 0}, {32, false});
    const cpu::VctGridData before = relit->read_grid();
    const VctStepTimes t = relit->set_lights(moved);
    EXPECT_GT(t.light_ms + t.mips_ms, 0.0) << device;
    auto fresh = make_vct_renderer(scene, {device, std::nullopt, 0}, {32, false}, moved);
    expect_same_grids(relit->read_grid(), fresh->read_grid());
    // and the light did change something
    uint64_t changed = 0;
    const cpu::VctGridData after = relit->read_grid();
    for (size_t i = 0; i < after.radiance.size(); ++i) changed += after.radiance[i] != before.radiance[i];
    EXPECT_GT(changed, after.radiance.size() / 10) << device;
    EXPECT_EQ(relit->set_lights(moved).relight_ms(), 0.0);  // unchanged lights: nothing to do
  }
}

CameraParams default_camera(const PackedScene& scene, uint32_t w, uint32_t h) {
  CameraSpec spec;
  spec.pose = pose_from_manifest(scene.manifest().camera());
  spec.vertical_fov_degrees = scene.manifest().camera().vertical_fov_degrees();
  return make_camera(spec, w, h);
}

TEST(VctBackends, HostAndOpenClAgree) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  PackedFile cornell("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  const PackedScene scene = PackedScene::load(cornell.path);
  for (bool solid : {false, true}) {
    auto host = make_vct_renderer(scene, {"host", std::nullopt, 0}, {32, solid});
    auto pocl = make_vct_renderer(scene, {"cpu", std::nullopt, 0}, {32, solid});
    expect_same_grids(host->read_grid(), pocl->read_grid(), 0.001);
    EXPECT_EQ(host->grid_stats().total_bytes(), pocl->grid_stats().total_bytes());
    if (solid) continue;
    const CameraParams camera = default_camera(scene, 48, 40);
    const RenderSettings settings = default_render_settings(scene);
    for (int preset = 1; preset <= 5; ++preset) {
      VctFrameSettings f;
      f.preset = preset;
      const ImageRgba8 a = render_vct_frame(*host, camera, settings, f, 24);
      const ImageRgba8 b = render_vct_frame(*pocl, camera, settings, f, 24);
      const DiffStats d = diff_stats(a, b, 2);
      EXPECT_LE(d.fraction_over_threshold, 0.002) << "preset " << preset << ", max diff " << d.max_abs_diff;
      EXPECT_LT(psnr_rgb(a, ImageRgba8(48, 40, Rgba8{0, 0, 0, 255})), 30.0) << "a blank image";
    }
  }
}

// TESSERA_CPU_PATHS=off builds the GPU code path on PoCL; the CPU paths (primary ray packets, SIMD
// leaf tests) must render the very same image.
TEST(VctBackends, CpuPathsEqualTheGpuCodePath) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  PackedFile cornell("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  const PackedScene scene = PackedScene::load(cornell.path);
  const CameraParams camera = default_camera(scene, 46, 38);  // not multiples of the 2 x 4 blocks
  const RenderSettings settings = default_render_settings(scene);
  auto cpu_paths = make_vct_renderer(scene, {"cpu", std::nullopt, 0}, {32, false});
  testing::ScopedEnv gpu_path("TESSERA_CPU_PATHS", "off");
  auto gpu_code = make_vct_renderer(scene, {"cpu", std::nullopt, 0}, {32, false});
  for (int preset : {1, 5}) {
    VctFrameSettings f;
    f.preset = preset;
    const ImageRgba8 a = render_vct_frame(*cpu_paths, camera, settings, f, 24);
    const ImageRgba8 b = render_vct_frame(*gpu_code, camera, settings, f, 24);
    EXPECT_EQ(diff_stats(a, b, 0).pixels_over_threshold, 0u) << "preset " << preset;
    EXPECT_LT(psnr_rgb(a, ImageRgba8(46, 38, Rgba8{0, 0, 0, 255})), 30.0) << "a blank image";
  }
}

// A worker's batch of tiles (both eyes, shuffled, edge tiles) in one launch (the GPU code path on
// PoCL), split or whole, gives every tile's pixels exactly as render_tile does; CPU paths go tile
// by tile through the same call.
TEST(VctBackends, BatchOfTilesEqualsSingleTiles) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  PackedFile cornell("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  const PackedScene scene = PackedScene::load(cornell.path);
  const RenderSettings settings = default_render_settings(scene);
  std::array<CameraParams, 2> cameras{default_camera(scene, 46, 38), default_camera(scene, 46, 38)};
  cameras[1].pos_x += 20.0f;  // the other eye sees something else
  std::vector<BatchTile> tiles;
  uint64_t total = 0;
  for (uint32_t eye : {1u, 0u})
    for (uint32_t y0 : {16u, 0u, 32u})
      for (uint32_t x0 : {32u, 0u, 16u}) {
        const TileRect rect{x0, y0, std::min(16u, 46 - x0), std::min(16u, 38 - y0)};
        tiles.push_back({rect, eye, total});
        total += uint64_t(rect.width) * rect.height;
      }
  const auto check = [&](VctRenderer& renderer, const VctFrameSettings& f, const std::string& what) {
    SCOPED_TRACE(what);
    std::vector<uint32_t> batch(total);
    renderer.render_tiles(cameras, settings, f, tiles, batch, {});
    size_t lit = 0;
    for (const BatchTile& t : tiles) {
      std::vector<uint32_t> single(size_t(t.rect.width) * t.rect.height);
      renderer.render_tile(cameras[t.eye], settings, f, t.rect, single);
      for (size_t i = 0; i < single.size(); ++i) {
        ASSERT_EQ(batch[t.offset + i], single[i]) << "tile " << t.rect.x0 << "," << t.rect.y0 << " eye " << t.eye << " pixel " << i;
        lit += (single[i] & 0xffffffu) != 0;
      }
    }
    EXPECT_GT(lit, total / 2) << "a blank image";
  };
  VctFrameSettings color, ao_reference;
  ao_reference.output = VctOutput::ao_reference;  // the whole kernel
  auto cpu_paths = make_vct_renderer(scene, {"cpu", std::nullopt, 0}, {32, false});
  check(*cpu_paths, color, "cpu paths");
  testing::ScopedEnv gpu_path("TESSERA_CPU_PATHS", "off");
  auto gpu_code = make_vct_renderer(scene, {"cpu", std::nullopt, 0}, {32, false});
  check(*gpu_code, color, "one launch, split");
  auto* pocl = dynamic_cast<OpenClVctRenderer*>(gpu_code.get());
  ASSERT_NE(pocl, nullptr);
  EXPECT_GT(pocl->last_primary_ms(), 0.0);
  check(*gpu_code, ao_reference, "one launch, whole");
  pocl->set_split_tile(false);
  check(*gpu_code, color, "one launch, whole kernel for colour");
  EXPECT_THROW(gpu_code->render_tiles(cameras, settings, color, tiles, std::span<uint32_t>(), {}), Error);
}

TEST(VctBackends, SplitTileEqualsSingleKernel) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  PackedFile cornell("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  const PackedScene scene = PackedScene::load(cornell.path);
  auto renderer = make_vct_renderer(scene, {"cpu", std::nullopt, 0}, {32, false});
  auto* pocl = dynamic_cast<OpenClVctRenderer*>(renderer.get());
  ASSERT_NE(pocl, nullptr);
  const CameraParams camera = default_camera(scene, 48, 40);
  const RenderSettings settings = default_render_settings(scene);
  auto both = [&](const VctFrameSettings& f, const std::string& what) {
    pocl->set_split_tile(false);
    const ImageRgba8 single = render_vct_frame(*pocl, camera, settings, f, 17);  // tiles of several sizes
    EXPECT_EQ(pocl->last_primary_ms(), 0.0);
    pocl->set_split_tile(true);
    const ImageRgba8 split = render_vct_frame(*pocl, camera, settings, f, 17);
    EXPECT_GT(pocl->last_primary_ms(), 0.0);
    EXPECT_GT(pocl->last_shade_ms(), 0.0);
    EXPECT_TRUE(split == single) << what;
  };
  for (int preset = 1; preset <= 5; ++preset) {
    VctFrameSettings f;
    f.preset = preset;
    both(f, "preset " + std::to_string(preset));
  }
  for (VctOutput output : {VctOutput::ao, VctOutput::indirect}) {
    VctFrameSettings f;
    f.preset = 5;
    f.output = output;
    both(f, "output " + std::to_string(int(output)));
  }
}

TEST(VctRender, TilesEqualTheFrameAndPresetsDiffer) {
  PackedFile cornell("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  const PackedScene scene = PackedScene::load(cornell.path);
  auto host = make_vct_renderer(scene, {"host", std::nullopt, 1}, {32, false});
  const CameraParams camera = default_camera(scene, 40, 30);
  const RenderSettings settings = default_render_settings(scene);
  VctFrameSettings f;
  const ImageRgba8 full = render_vct_frame(*host, camera, settings, f, 256);
  EXPECT_TRUE(render_vct_frame(*host, camera, settings, f, 13) == full);
  ImageRgba8 previous;
  for (int preset = 1; preset <= 5; ++preset) {
    f.preset = preset;
    const ImageRgba8 image = render_vct_frame(*host, camera, settings, f, 256);
    if (preset > 1) {
      EXPECT_FALSE(image == previous) << "preset " << preset;
    }
    previous = image;
  }
  EXPECT_THROW(validate_vct_grid(100), Error);
  EXPECT_THROW(validate_vct_preset(7), Error);
  EXPECT_THROW(validate_shadow_cone(30), Error);
  EXPECT_NO_THROW(validate_shadow_cone(2.5f));
}

TEST(TesseraRender, VctBadInputGivesOneErrorLine) {
  PackedFile cornell("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  TempDir dir("vct_cli");
  const std::string bin = (testing::binary_dir() / "worker/tessera-render").string() + " " + cornell.path.string() + " -o " +
                          (dir / "o.png").string() + " ";
  auto expect_error = [&](const std::string& args, const std::string& needle) {
    const auto r = testing::run_command(bin + args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_NE(r.output.find(needle), std::string::npos) << args << "\n" << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  };
  expect_error("--mode vct --vct-grid 100", "--vct-grid 100");
  expect_error("--mode vct --vct-preset 7", "--vct-preset 7");
  expect_error("--mode vct --shadow-cone 30", "--shadow-cone 30");
  expect_error("--mode vct --vct-output sketch", "--vct-output");
  expect_error("--vct-preset 3", "needs --mode vct");
  EXPECT_FALSE(std::filesystem::exists(dir / "o.png"));
  const auto ok = testing::run_command(bin + "--mode vct --vct-grid 64 --vct-preset 5 --size 16x12 --device host --json "
                                             "--move-light 200,500,250");
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  const auto json = nlohmann::json::parse(ok.output.substr(ok.output.find('{')));
  EXPECT_EQ(json["grid"].get<int>(), 64);
  EXPECT_GT(json["voxels_per_level"][0].get<uint64_t>(), 0u);
  EXPECT_TRUE(json.contains("relight"));
  EXPECT_EQ(read_image(dir / "o.png").width(), 16);
}

TEST(TesseraRender, VctGridCountsAgainstGpuMemoryLimit) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  PackedFile cornell("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  const auto r = testing::run_command((testing::binary_dir() / "worker/tessera-render").string() + " " + cornell.path.string() +
                                      " -o /tmp/never.png --mode vct --vct-grid 64 --device cpu --size 8x8 --gpu-mem-limit 200K");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("VCT grid"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("vct_radiance"), std::string::npos) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

TEST(TesseraBench, VctSmokeRun) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  PackedFile cornell("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  const auto r = testing::run_command((testing::binary_dir() / "worker/tessera-bench").string() + " vct " + cornell.path.string() +
                                      " --device cpu --size 24 --grid 64 --grids 64 --angles 10,2.5 --passes 1 --build-passes 1"
                                      " --ao-rays 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto json = nlohmann::json::parse(r.output);
  const auto& s = json["scenes"][0];
  EXPECT_EQ(s["table_5_2"]["presets"].size(), 5u);
  EXPECT_GT(s["table_5_3"]["voxelize_ms"].get<double>(), 0.0);
  EXPECT_EQ(s["table_5_4"]["angles"].size(), 2u);
  EXPECT_EQ(s["table_5_5"][0]["grid"].get<int>(), 64);
  EXPECT_GT(s["memory"]["total_bytes"].get<uint64_t>(), 0u);
  EXPECT_LT(s["memory"]["total_bytes"].get<uint64_t>(), s["memory"]["dense_thesis_bytes"].get<uint64_t>());
  EXPECT_TRUE(s.contains("solid_fill"));
  EXPECT_TRUE(s.contains("relight"));
  const auto bad = testing::run_command((testing::binary_dir() / "worker/tessera-bench").string() + " vct " +
                                        cornell.path.string() + " --grid 100");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--grid 100"), std::string::npos) << bad.output;
}

TEST(TesseraBench, VctJsonOutIsWrittenAtomicallyAndNeverReplacesASpecialFile) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  PackedFile cornell("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  testing::TempDir dir("bench_json_out");
  const auto bench = [&](const std::filesystem::path& out) {
    return testing::run_command((testing::binary_dir() / "worker/tessera-bench").string() + " vct " + cornell.path.string() +
                                " --device cpu --size 16 --grid 64 --grids 64 --angles 10 --passes 1 --build-passes 1"
                                " --ao-rays 1 --no-solid-compare --json --json-out " + out.string());
  };
  const auto fifo = dir / "pipe.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto refused = bench(fifo);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("not a regular file"), std::string::npos) << refused.output;
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));  // still the pipe, not swapped for a file
  const auto written = dir / "bench.json";
  const auto r = bench(written);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(read_file_text(written))["scenes"].size(), 1u);
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 2u);  // the pipe and the output: no temporary file left behind
}

}  // namespace
}  // namespace tessera
