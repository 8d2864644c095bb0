// The vct mode on instanced scenes (docs/instances.md, docs/render-modes.md): OBJ groups under identity
// instances render the flattened pack's image, a grid updated where instances moved equals the moved
// scene voxelized again (bit for bit, on the host and on PoCL, each against its own full voxelization;
// PoCL's grids follow the same instances as the host's), and
// tessera-render --mode vct --time places the grid at that instant.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "common/base/file_io.h"
#include "common/image/metrics.h"
#include "common/image/png_io.h"
#include "common/render/camera_setup.h"
#include "common/render/shading_data.h"
#include "common/render/vct_options.h"
#include "instanced_pack_support.h"
#include "opencl_test_support.h"
#include "test_helpers.h"
#include "vct_test_support.h"
#include "worker/render/vct_renderer.h"

namespace tessera::testing {
namespace {

std::string render_bin() { return (binary_dir() / "worker/tessera-render").string() + " "; }

// A floor (a flat static box), a still cube and a cube that flies over the floor and back in 2 s.
std::filesystem::path pack_flyover(const std::filesystem::path& dir) {
  AnimatedGltf gltf;
  const int cube = add_cube_mesh(gltf, 1.0f);
  gltf.node({{"mesh", cube}, {"translation", {2.0, -1.0, 0.0}}, {"scale", {9.0, 0.25, 6.0}}});
  gltf.node({{"mesh", cube}, {"rotation", {0.0, 0.2588190, 0.0, 0.9659258}}});
  const int flyer = gltf.node({{"mesh", cube}, {"translation", {3.0, 0.5, 0.0}}, {"scale", {0.6, 0.6, 0.6}}});
  const int times = gltf.accessor({0.0f, 1.0f, 2.0f}, "SCALAR");
  gltf.channel(0, flyer, "translation", "LINEAR", times, gltf.accessor({3, 0.5f, 0, 5, 1.5f, 1, 3, 0.5f, 0}, "VEC3"));
  add_default_scene(gltf);
  const auto tpk = dir / "flyover.tpk";
  pack::pack_scene(instanced_pack_options(gltf.write(dir / "flyover.gltf"), tpk));
  return tpk;
}

// A light above the scene and a low sun, so moving the cube moves shadows across the floor.
std::vector<VctLight> flyover_lights() {
  VctLight point{};
  point.type = TS_VCT_LIGHT_POINT;
  point.x = 1.0f, point.y = 6.0f, point.z = 1.0f;
  point.r = point.g = point.b = 60.0f;
  VctLight sun{};
  sun.type = TS_VCT_LIGHT_DIRECTIONAL;
  const float l = std::sqrt(0.8f * 0.8f + 1.0f + 0.3f * 0.3f);
  sun.x = -0.8f / l, sun.y = -1.0f / l, sun.z = -0.3f / l;
  sun.r = sun.g = sun.b = 2.0f;
  return {point, sun};
}

std::unique_ptr<VctRenderer> vct_renderer(const PackedScene& scene, const std::string& device, bool solid = false) {
  return make_vct_renderer(scene, {device, std::nullopt, 0}, {32, solid}, flyover_lights());
}

CameraParams flyover_camera(uint32_t w, uint32_t h) {
  CameraSpec spec;
  spec.pose = look_at({2.0f, 5.0f, 9.0f}, {2.5f, 0.0f, 0.0f}, {0.0f, 1.0f, 0.0f});
  spec.vertical_fov_degrees = 50.0f;
  return make_camera(spec, w, h);
}

TEST(InstancedVct, IdentityInstancesRenderTheFlattenedImage) {
  TempDir dir("vct_groups");
  std::string obj;
  obj += "v -4 -1 -3\nv 6 -1 -3\nv 6 -1 3\nv -4 -1 3\ng floor\nf 1 3 2\nf 1 4 3\n";
  obj += grouped_boxes_obj(5);  // after the floor's four vertices
  write_text(dir / "parts.obj", obj);
  const std::string pack = (binary_dir() / "tessera-pack").string() + " " + shell_word(dir / "parts.obj") + " -o ";
  ASSERT_EQ(run_command(pack + shell_word(dir / "groups.tpk") + " --keep-obj-groups").exit_code, 0);
  ASSERT_EQ(run_command(pack + shell_word(dir / "flat.tpk")).exit_code, 0);
  const std::string args = " --device host --size 64x48 --eye 2,3,7 --target 1.5,0,0 --mode vct --vct-grid 64 --vct-preset 5";
  for (const char* name : {"groups", "flat"}) {
    const auto r = run_command(render_bin() + shell_word(dir / (std::string(name) + ".tpk")) + " -o " +
                               shell_word(dir / (std::string(name) + ".png")) + args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  const ImageRgba8 groups = read_image(dir / "groups.png"), flat = read_image(dir / "flat.png");
  EXPECT_EQ(diff_stats(groups, flat, 0).pixels_over_threshold, 0u);
  EXPECT_LT(psnr_rgb(groups, ImageRgba8(64, 48, Rgba8{0, 0, 0, 255})), 30.0) << "a blank image";
}

// The cube flies on, is grabbed to the floor's far corner, then let go while the still cube is grabbed
// elsewhere: after each move the grid updated where things went equals a grid voxelized again from
// scratch at that placement, every voxel of every level.
TEST(InstancedVct, IncrementalUpdateEqualsVoxelizingTheMovedScene) {
  TempDir dir("vct_incremental");
  const PackedScene scene = PackedScene::load(pack_flyover(dir.path()));
  auto motion = SceneMotion::of_scene(scene, "flyover");
  ASSERT_TRUE(motion);
  auto updated = vct_renderer(scene, "host");
  const cpu::VctGridData packed = updated->read_grid();
  const uint64_t grid_voxels = 32 * 32 * 32;
  for (int step = 0; step < 4; ++step) {
    SCOPED_TRACE(step);
    if (step < 2) {
      motion->set_time(step == 0 ? 0.4 : 1.3);
    } else if (step == 2) {
      motion->set_instance_transform(2, Transform3x4{{0.6f, 0, 0, 6.0f, 0, 0.6f, 0, -0.4f, 0, 0, 0.6f, 2.5f}});
    } else {  // two at once, far apart: regions of their own
      motion->clear_instance_transform(2);
      motion->set_instance_transform(1, Transform3x4{{1, 0, 0, -2.0f, 0, 1, 0, -0.3f, 0, 0, 1, -2.0f}});
    }
    const TopLevelBvh& top = motion->top_level();
    const VctUpdateTimes u = updated->place_instances(top);
    EXPECT_EQ(u.moved, step == 3 ? 2u : 1u);
    EXPECT_TRUE(u.incremental);
    EXPECT_GT(u.region_voxels, 0u);
    EXPECT_LT(u.region_voxels, grid_voxels / 8) << "the region is the flyer's, not the grid";
    EXPECT_GT(u.relit_outside, 0u) << "its shadow moved across the floor";
    auto fresh = vct_renderer(scene, "host");
    fresh->set_update_mode(VctUpdateMode::full);
    const VctUpdateTimes f = fresh->place_instances(top);
    EXPECT_FALSE(f.incremental);
    const cpu::VctGridData a = updated->read_grid(), b = fresh->read_grid();
    EXPECT_TRUE(cpu::vct_equal_voxels(a, b));
    expect_same_grids(a, b);  // (names the first voxel that differs, if any)
    EXPECT_FALSE(cpu::vct_equal_voxels(a, packed)) << "nothing moved in the grid";
  }
  EXPECT_EQ(updated->place_instances(motion->top_level()).moved, 0u);  // the same placement: nothing to do
  // A filled grid is voxelized again whole, to the same grid.
  auto solid = vct_renderer(scene, "host", true);
  EXPECT_FALSE(solid->place_instances(motion->top_level()).incremental);
  auto solid_fresh = vct_renderer(scene, "host", true);
  solid_fresh->set_update_mode(VctUpdateMode::full);
  solid_fresh->place_instances(motion->top_level());
  EXPECT_TRUE(cpu::vct_equal_voxels(solid->read_grid(), solid_fresh->read_grid()));
}

// PoCL's CPU paths and its GPU code path voxelize the instances where the host does (its grid within
// the host/OpenCL tolerance of tests/test_vct.cpp), and render the moved scene alike. Their grids follow
// moves incrementally too: after each move the updated grid is, voxel for voxel, the one the same device
// voxelizes from scratch at that placement.
TEST(InstancedVct, OpenClGridsFollowTheInstancesAsTheHostDoes) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  TempDir dir("vct_opencl");
  const PackedScene scene = PackedScene::load(pack_flyover(dir.path()));
  auto motion = SceneMotion::of_scene(scene, "flyover");
  auto host = vct_renderer(scene, "host");
  std::vector<TopLevelBvh> placements;  // the flyer on its way, then it and the still cube grabbed at once
  motion->set_time(0.7);
  placements.push_back(motion->top_level());
  motion->set_instance_transform(2, Transform3x4{{0.6f, 0, 0, 6.0f, 0, 0.6f, 0, -0.4f, 0, 0, 0.6f, 2.5f}});
  motion->set_instance_transform(1, Transform3x4{{1, 0, 0, -2.0f, 0, 1, 0, -0.3f, 0, 0, 1, -2.0f}});
  placements.push_back(motion->top_level());
  const CameraParams camera = flyover_camera(48, 40);
  const RenderSettings settings = default_render_settings(scene);
  VctFrameSettings frame;
  frame.preset = 5;
  std::vector<cpu::VctGridData> host_grids;
  std::vector<ImageRgba8> host_images;
  for (const TopLevelBvh& top : placements) {
    ASSERT_TRUE(host->place_instances(top).incremental);
    host_grids.push_back(host->read_grid());
    host_images.push_back(render_vct_frame(*host, camera, settings, frame, 24));
  }
  EXPECT_LT(psnr_rgb(host_images[0], ImageRgba8(48, 40, Rgba8{0, 0, 0, 255})), 30.0) << "a blank image";
  std::vector<ImageRgba8> cpu_paths_images;
  for (const char* paths : {"", "off"}) {
    SCOPED_TRACE(paths);
    std::optional<ScopedEnv> gpu_path;
    if (*paths) gpu_path.emplace("TESSERA_CPU_PATHS", paths);
    auto pocl = vct_renderer(scene, "cpu");
    const cpu::VctGridData packed = pocl->read_grid();
    for (size_t step = 0; step < placements.size(); ++step) {
      SCOPED_TRACE(step);
      const VctUpdateTimes u = pocl->place_instances(placements[step]);
      EXPECT_EQ(u.moved, step == 0 ? 1u : 2u);
      EXPECT_TRUE(u.incremental) << "the region update, not a whole new grid";
      EXPECT_GT(u.region_voxels, 0u);
      EXPECT_LT(u.region_voxels, 32u * 32u * 32u / 8u) << "the region is the movers', not the grid";
      EXPECT_GT(u.relit_outside, 0u) << "shadows moved across the floor";
      auto fresh = vct_renderer(scene, "cpu");
      fresh->set_update_mode(VctUpdateMode::full);
      EXPECT_FALSE(fresh->place_instances(placements[step]).incremental);
      const cpu::VctGridData updated = pocl->read_grid(), full = fresh->read_grid();
      EXPECT_TRUE(cpu::vct_equal_voxels(updated, full));
      expect_same_grids(updated, full);  // (names the first voxel that differs, if any)
      EXPECT_FALSE(cpu::vct_equal_voxels(updated, packed)) << "nothing moved in the grid";
      expect_same_grids(host_grids[step], updated, 0.001);
      const ImageRgba8 image = render_vct_frame(*pocl, camera, settings, frame, 24);
      const DiffStats d = diff_stats(host_images[step], image, 2);
      EXPECT_LE(d.fraction_over_threshold, 0.002) << "max diff " << d.max_abs_diff;
      if (cpu_paths_images.size() > step) EXPECT_EQ(diff_stats(cpu_paths_images[step], image, 0).pixels_over_threshold, 0u);
      else cpu_paths_images.push_back(image);
    }
  }
}

// tessera-bench vct --motion on PoCL: the OpenCL grid updated step by step against one voxelized again
// every step, both ending equal; a filled grid is voxelized again whole there too.
TEST(InstancedVct, BenchMotionTimesTheOpenClUpdateAgainstAFullOne) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  TempDir dir("vct_motion_bench");
  const auto tpk = pack_flyover(dir.path());
  const auto r = run_command((binary_dir() / "worker/tessera-bench").string() + " vct " + shell_word(tpk) +
                             " --motion 0.3 --motion-steps 2 --grid 32 --device cpu --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto json = nlohmann::json::parse(r.output);
  EXPECT_EQ(json["incremental"]["incremental_steps"].get<uint32_t>(), 2u);
  EXPECT_EQ(json["full"]["incremental_steps"].get<uint32_t>(), 0u);
  EXPECT_GT(json["incremental"]["region_voxels"].get<double>(), 0.0);
  EXPECT_TRUE(json["grids_equal"].get<bool>());
  const PackedScene scene = PackedScene::load(tpk);
  auto motion = SceneMotion::of_scene(scene, "flyover");
  motion->set_time(0.5);
  auto solid = vct_renderer(scene, "cpu", true);
  const VctUpdateTimes u = solid->place_instances(motion->top_level());
  EXPECT_EQ(u.moved, 1u);
  EXPECT_FALSE(u.incremental);
}

// tessera-render --mode vct --time T: the grid where the instances are at T (another instant, another image).
TEST(InstancedVct, TesseraRenderTimePlacesTheGrid) {
  TempDir dir("vct_time");
  const auto tpk = pack_flyover(dir.path());
  const std::string args = " --device host --size 64x48 --eye 2,5,9 --target 2.5,0,0 --mode vct --vct-grid 64 --vct-preset 4";
  for (const char* t : {"0.4", "1.3"}) {
    const auto r = run_command(render_bin() + shell_word(tpk) + " -o " + shell_word(dir / (std::string(t) + ".png")) + args + " --time " + t);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  EXPECT_GT(diff_stats(read_image(dir / "0.4.png"), read_image(dir / "1.3.png"), 0).pixels_over_threshold, 0u);
}

}  // namespace
}  // namespace tessera::testing
