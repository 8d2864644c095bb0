// The raytrace mode: the host build of the kernels and the OpenCL build (PoCL here) give the
// same image; a tile set equals the same pixels of the full frame; tessera-render handles bad
// input with one clear error.
#include <gtest/gtest.h>

#include <cstring>

#include "common/base/error.h"
#include "common/cl/commands.h"
#include "common/cl/device.h"
#include "common/cl/device_memory.h"
#include "common/cl/program.h"
#include "common/cl/device_selection.h"
#include "common/image/metrics.h"
#include "common/image/png_io.h"
#include "common/render/camera_setup.h"
#include "common/render/shading_data.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"
#include "worker/render/device_scene.h"
#include "worker/render/frame_render.h"
#include "opencl_test_support.h"

namespace tessera {
namespace {

using testing::TempDir;

using testing::opencl_available;

struct PackedFixture {
  TempDir dir{"render"};
  std::filesystem::path path;
  PackedFixture(const std::string& scene, const std::string& settings, bool textures = true) {
    pack::PackOptions o;
    o.input = testing::scene_path(scene);
    o.output = path = dir / "scene.tpk";
    if (!settings.empty()) o.settings = testing::source_dir() / "scene-packer/scenes" / settings;
    o.load_textures = textures;
    o.max_texture_size = 256;
    o.show_progress = false;
    o.zstd_level = 1;
    pack::pack_scene(o);
  }
};

CameraParams default_camera(const PackedScene& scene, uint32_t w, uint32_t h) {
  CameraSpec spec;
  spec.pose = pose_from_manifest(scene.manifest().camera());
  spec.vertical_fov_degrees = scene.manifest().camera().vertical_fov_degrees();
  return make_camera(spec, w, h);
}

void expect_host_equals_opencl(const PackedScene& scene, uint32_t w, uint32_t h) {
  const CameraParams camera = default_camera(scene, w, h);
  const RenderSettings settings = default_render_settings(scene);
  auto host = make_tile_renderer(scene, {"host", std::nullopt, 0});
  auto pocl = make_tile_renderer(scene, {"cpu", std::nullopt, 0});
  const ImageRgba8 a = render_frame(*host, camera, settings, 64);
  const ImageRgba8 b = render_frame(*pocl, camera, settings, 64);
  const DiffStats d = diff_stats(a, b, 1);
  // Identical, or at most 1 in 8 bits on at most 0.1 % of the pixels.
  EXPECT_EQ(d.pixels_over_threshold, 0u) << "max diff " << d.max_abs_diff;
  EXPECT_LE(diff_stats(a, b, 0).fraction_over_threshold, 0.001);
  // A real picture, not a blank one.
  EXPECT_GT(ssim_luma(a, ImageRgba8(int(w), int(h), Rgba8{0, 0, 0, 255})), -1.0);
  EXPECT_LT(psnr_rgb(a, ImageRgba8(int(w), int(h), Rgba8{0, 0, 0, 255})), 30.0);
}

TEST(RaytraceMode, HostAndOpenClAgreeOnCornellBox) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  PackedFixture f("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  expect_host_equals_opencl(PackedScene::load(f.path), 96, 80);
}

TEST(RaytraceMode, HostAndOpenClAgreeOnTexturedSponza) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  PackedFixture f("crytek_sponza/sponza.obj.zst", "crytek_sponza.scene.txtpb");
  expect_host_equals_opencl(PackedScene::load(f.path), 64, 48);
}

// On CPU devices the kernels take their CPU paths (SIMD leaf tests, ray packets); TESSERA_CPU_PATHS=off
// builds the GPU code path instead. Both must give the very same image.
void expect_cpu_paths_equal_gpu_path(const PackedScene& scene, uint32_t w, uint32_t h) {
  const CameraParams camera = default_camera(scene, w, h);
  const RenderSettings settings = default_render_settings(scene);
  auto cpu_paths = make_tile_renderer(scene, {"cpu", std::nullopt, 0});
  const ImageRgba8 a = render_frame(*cpu_paths, camera, settings, 32);
  testing::ScopedEnv gpu_path("TESSERA_CPU_PATHS", "off");
  auto gpu_code = make_tile_renderer(scene, {"cpu", std::nullopt, 0});
  const ImageRgba8 b = render_frame(*gpu_code, camera, settings, 32);
  const DiffStats d = diff_stats(a, b, 0);
  EXPECT_EQ(d.pixels_over_threshold, 0u) << "max diff " << d.max_abs_diff;
  EXPECT_LT(psnr_rgb(a, ImageRgba8(int(w), int(h), Rgba8{0, 0, 0, 255})), 30.0) << "a blank image";
}

TEST(RaytraceMode, CpuPathsEqualTheGpuCodePath) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  PackedFixture cornell("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  expect_cpu_paths_equal_gpu_path(PackedScene::load(cornell.path), 70, 45);  // not multiples of the 2 x 4 blocks
  PackedFixture sponza("crytek_sponza/sponza.obj.zst", "crytek_sponza.scene.txtpb");
  expect_cpu_paths_equal_gpu_path(PackedScene::load(sponza.path), 64, 48);
}

TEST(RaytraceMode, MirrorAndGlassAgreeToo) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  TempDir dir("render_glass");
  testing::write_text(dir / "glass.scene.txtpb",
                      "materials { name: \"red\" type: MIRROR diffuse { x: 0.9 y: 0.9 z: 0.9 } }\n"
                      "materials { name: \"green\" type: GLASS ior: 1.5 }\n"
                      "materials { name: \"light\" type: EMISSIVE emission { x: 17 y: 12 z: 4 } }\n"
                      "camera { position { x: 278 y: 273 z: -800 } qw: 0 qy: 1 vertical_fov_degrees: 39.3 }\n"
                      "point_lights { position { x: 278 y: 500 z: 279 } intensity { x: 50000 y: 50000 z: 50000 } }\n");
  pack::PackOptions o;
  o.input = testing::scene_path("cornell_box/cornell_box.obj");
  o.output = dir / "glass.tpk";
  o.settings = dir / "glass.scene.txtpb";
  o.show_progress = false;
  pack::pack_scene(o);
  expect_host_equals_opencl(PackedScene::load(dir / "glass.tpk"), 80, 64);
}

TEST(RaytraceMode, TileSetEqualsTheFullFrame) {
  PackedFixture f("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  const PackedScene scene = PackedScene::load(f.path);
  const CameraParams camera = default_camera(scene, 90, 70);
  const RenderSettings settings = default_render_settings(scene);
  auto host = make_tile_renderer(scene, {"host", std::nullopt, 1});
  const ImageRgba8 full = render_frame(*host, camera, settings, 256);
  for (uint32_t tile : {8u, 13u, 32u}) {
    const ImageRgba8 tiled = render_frame(*host, camera, settings, tile);
    EXPECT_TRUE(tiled == full) << "tile size " << tile;
  }
  // One odd tile on its own.
  const TileRect rect{17, 9, 23, 31};
  std::vector<uint32_t> pixels(rect.width * rect.height);
  host->render_raytrace(camera, settings, rect, pixels);
  for (uint32_t y = 0; y < rect.height; ++y)
    for (uint32_t x = 0; x < rect.width; ++x) {
      const Rgba8 p = full.at(int(rect.x0 + x), int(rect.y0 + y));
      const uint32_t word = pixels[y * rect.width + x];
      ASSERT_EQ(word, uint32_t(p.r) | uint32_t(p.g) << 8 | uint32_t(p.b) << 16 | uint32_t(p.a) << 24);
    }
}

TEST(CameraSetup, PosesAndLookAtAgree) {
  const Pose pose = look_at({0, 0, 5}, {0, 0, 0}, {0, 1, 0});  // looking down -z: identity rotation
  EXPECT_NEAR(pose.orientation[0], 1.0f, 1e-6f);
  const Pose side = look_at({5, 0, 0}, {0, 0, 0}, {0, 1, 0});  // looking down -x
  const auto forward = rotate(side.orientation, {0, 0, -1});
  EXPECT_NEAR(forward[0], -1.0f, 1e-6f);
  EXPECT_THROW(parse_pose("1,2,3,2,0,0,0"), Error);        // norm 2: refused
  EXPECT_NO_THROW(parse_pose("1,2,3,1.004,0,0,0"));         // rounding: normalized
  EXPECT_THROW(parse_pose("1,2,3,1,0,0"), Error);           // too few numbers
  EXPECT_THROW(parse_pose("1,2,x,1,0,0,0"), Error);
  EXPECT_THROW(look_at({0, 0, 0}, {0, 5, 0}, {0, 1, 0}), Error);  // up parallel to view
}

TEST(TesseraRender, BadInputGivesOneErrorLine) {
  PackedFixture f("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb");
  TempDir dir("render_cli");
  const std::string bin = (testing::binary_dir() / "worker/tessera-render").string() + " ";
  const std::string scene = f.path.string();
  const std::string out = (dir / "o.png").string();
  auto expect_error = [&](const std::string& args, const std::string& needle) {
    const auto r = testing::run_command(bin + args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_NE(r.output.find(needle), std::string::npos) << args << "\n" << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  };
  expect_error(scene + " -o " + out + " --mode sketch", "--mode");
  expect_error(scene + " -o " + out + " --device 99 --size 8x8", "99");
  expect_error(scene + " -o " + out + " --device banana --size 8x8", "banana");
  expect_error(scene + " -o " + out + " --pose 1,2,3,2,0,0,0", "quaternion");
  expect_error(scene + " -o " + out + " --pose 1,2", "pose");
  expect_error(scene + " -o " + out + " --size 0x10", "--size");
  expect_error(scene + " -o " + out + " --size 20000x10", "--size");
  expect_error(scene + " -o " + out + " --size 10by10", "--size");
  expect_error(scene + " -o " + (dir / "missing/dir/o.png").string() + " --size 8x8 --device host", "o.png");
  expect_error((dir / "none.tpk").string() + " -o " + out, "none.tpk");
  EXPECT_FALSE(std::filesystem::exists(out));
  const auto ok = testing::run_command(bin + scene + " -o " + out + " --size 24x16 --device host --json");
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_EQ(read_image(out).width(), 24);
}

TEST(TesseraRender, GpuMemoryLimitRefusesWithBufferList) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  PackedFixture f("stanford_bunny/bun_zipper_res4.ply", "");
  const auto r = testing::run_command((testing::binary_dir() / "worker/tessera-render").string() + " " + f.path.string() +
                                      " -o /tmp/never.png --device cpu --size 8x8 --gpu-mem-limit 20K");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("kd_nodes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--gpu-mem-limit"), std::string::npos) << r.output;
}

TEST(TesseraBench, RaysSmokeRun) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  PackedFixture f("stanford_bunny/bun_zipper_res4.ply", "");
  const auto r = testing::run_command((testing::binary_dir() / "worker/tessera-bench").string() + " rays " + f.path.string() +
                                      " --device cpu --size 32 --passes 5 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto json = nlohmann::json::parse(r.output);
  EXPECT_GT(json[0]["kernels"]["primary"]["mrays_per_s"].get<double>(), 0.0);
  EXPECT_EQ(json[0]["kernels"]["primary"]["rays"].get<uint64_t>(), 32u * 32u);
}

// On CPU devices tessera-bench traces primary and shadow rays as packets of 2 x 4 pixels; they must
// report exactly what the one-ray-per-pixel kernels report, edge blocks included.
TEST(TesseraBench, CpuPacketKernelsTraceTheSameRays) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  PackedFixture f("cornell_box/cornell_box.obj", "cornell_box.scene.txtpb", false);
  const PackedScene scene = PackedScene::load(f.path);
  const cl::Device device = cl::Device::open("cpu");
  cl::DeviceMemoryBudget budget(device);
  const DeviceScene device_scene(device, budget, scene);
  const cl::Program program = cl::build_program(device, "kernels/device/opencl/raytrace.cl");
  const uint32_t w = 37, h = 29;  // not multiples of the blocks
  const size_t pixels = size_t(w) * h;
  const CameraParams camera = default_camera(scene, w, h);
  const auto& b = scene.manifest().bounds();
  const float light[3] = {0.5f * (b.min().x() + b.max().x()), b.max().y() - 0.05f * (b.max().y() - b.min().y()),
                          0.5f * (b.min().z() + b.max().z())};
  auto run = [&](const std::string& name, size_t gx, size_t gy, auto&& set_args) {
    cl::Kernel k = program.kernel(name);
    set_args(k, device_scene.set_scene_args(k));
    cl::launch_2d(device, k, {gx, gy}, {1, 1}).wait();
  };
  cl::Buffer hits[2] = {budget.create("hits_single", pixels * 16), budget.create("hits_block", pixels * 16)};
  cl::Buffer occluded[2] = {budget.create("occluded_single", pixels * 4), budget.create("occluded_block", pixels * 4)};
  for (int i = 0; i < 2; ++i) {
    const std::string suffix = i ? "_block" : "";
    const size_t gx = i ? (w + 1) / 2 : w, gy = i ? (h + 3) / 4 : h;
    run("bench_primary" + suffix, gx, gy, [&](cl::Kernel& k, cl_uint arg) {
      k.set_arg(arg++, camera);
      k.set_arg(arg++, hits[i]);
    });
    run("bench_shadow" + suffix, gx, gy, [&](cl::Kernel& k, cl_uint arg) {
      k.set_arg(arg++, camera);
      k.set_arg(arg++, hits[0]);
      for (float c : light) k.set_arg(arg++, c);
      k.set_arg(arg++, occluded[i]);
    });
  }
  const auto single = cl::read_buffer<cl_float4>(device, hits[0], pixels);
  const auto block = cl::read_buffer<cl_float4>(device, hits[1], pixels);
  const auto occ_single = cl::read_buffer<cl_uint>(device, occluded[0], pixels);
  const auto occ_block = cl::read_buffer<cl_uint>(device, occluded[1], pixels);
  size_t hit_count = 0, shadowed = 0;
  for (size_t i = 0; i < pixels; ++i) {
    EXPECT_EQ(std::memcmp(&single[i], &block[i], sizeof(cl_float4)), 0) << "pixel " << i % w << "," << i / w;
    EXPECT_EQ(occ_single[i], occ_block[i]) << "pixel " << i % w << "," << i / w;
    hit_count += single[i].s[0] >= 0.0f;
    shadowed += occ_single[i] == 1u;
  }
  EXPECT_GT(hit_count, pixels / 2);
  EXPECT_GT(shadowed, 0u);
  EXPECT_LT(shadowed, hit_count);
}

}  // namespace
}  // namespace tessera
