// Variants of the GPU traversal and its scheduling (kernels/accel/kdtree_traverse.h short stacks,
// kernels/render/persistent_groups.h, kernels/render/ray_octant_sort.h) must trace exactly the
// hits of the default kernels: `tessera-bench rays` prints the same XXH64 hashes of the primary,
// shadow and diffuse hit records. Run on the OpenCL CPU device (PoCL here) with the GPU code path
// (TESSERA_CPU_PATHS=off), on Stanford's bunny and on Crytek Sponza, whose rays need more than 8
// stack entries (a plain stack of 8 that drops further far children changes its hits), so short
// stacks of 1 to 8 entries spill and refill.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "common/base/error.h"
#include "common/cl/device_selection.h"
#include "common/image/png_io.h"
#include "common/render/camera_setup.h"
#include "common/render/stereo.h"
#include "scene-packer/packer.h"
#include "pack_test_support.h"
#include "test_helpers.h"
#include "worker/render/pathtrace_frame.h"
#include "opencl_test_support.h"

namespace tessera {
namespace {

using testing::ScopedEnv;
using testing::TempDir;

using testing::opencl_available;

// Work items past the 8 x 8 blocks are idle in every launch below: sizes that are not multiples of 8.
const uint32_t kPathWidth = 44, kPathHeight = 30;

class TraversalVariants : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("traversal_variants");
    testing::pack_for_test(testing::scene_path("stanford_bunny/bun_zipper_res4.ply"), std::nullopt, dir_->path() / "bunny.tpk");
    testing::pack_for_test(testing::scene_path("crytek_sponza/sponza.obj.zst"),
         testing::source_dir() / "scene-packer/scenes/crytek_sponza.scene.txtpb", dir_->path() / "crytek.tpk");
    default_ = new nlohmann::json(bench("", ""));
  }
  static void TearDownTestSuite() {
    delete default_;
    delete dir_;
  }

  // `tessera-bench rays --json` on both scenes with the GPU code path; cl_options go to every kernel build.
  static nlohmann::json bench(const std::string& cl_options, const std::string& flags) {
    ScopedEnv paths("TESSERA_CPU_PATHS", "off");
    ScopedEnv options("TESSERA_CL_OPTIONS", cl_options);
    const auto r = testing::run_command((testing::binary_dir() / "worker/tessera-bench").string() + " rays " +
                                        (dir_->path() / "bunny.tpk").string() + " " + (dir_->path() / "crytek.tpk").string() +
                                        " --device cpu --size 40 --passes 5 --no-embree --json " + flags);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.exit_code == 0 ? nlohmann::json::parse(r.output) : nlohmann::json::array();
  }

  // The variant's run, for more checks.
  static nlohmann::json expect_default_hits(const std::string& cl_options, const std::string& flags) {
    const nlohmann::json variant = bench(cl_options, flags);
    EXPECT_EQ(variant.size(), 2u);
    EXPECT_EQ(default_->size(), 2u);
    if (variant.size() != 2u || default_->size() != 2u) return variant;
    for (size_t scene = 0; scene < 2; ++scene)
      for (const char* kind : {"primary", "shadow", "diffuse"}) {
        const auto& a = (*default_)[scene]["kernels"][kind];
        const auto& b = variant[scene]["kernels"][kind];
        EXPECT_EQ(a["hits_xxh64"], b["hits_xxh64"]) << kind << " rays of " << (*default_)[scene]["scene"];
        EXPECT_EQ(a["rays"], b["rays"]) << kind;
      }
    return variant;
  }

  static TempDir* dir_;
  static nlohmann::json* default_;
};

TempDir* TraversalVariants::dir_ = nullptr;
nlohmann::json* TraversalVariants::default_ = nullptr;

TEST_F(TraversalVariants, DefaultRunTracesRealHits) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  ASSERT_EQ(default_->size(), 2u);
  for (size_t scene = 0; scene < 2; ++scene) {
    // the hashes of a run without hits would all be equal; these scenes have hits and shadows
    const auto& k = (*default_)[scene]["kernels"];
    EXPECT_GT(k["shadow"]["rays"].get<uint64_t>(), 40u * 40u / 8u) << (*default_)[scene]["scene"];
    EXPECT_NE(k["primary"]["hits_xxh64"], k["diffuse"]["hits_xxh64"]);
  }
}

// The scenes exercise the spills: a stack that holds only 4 (bunny) or 8 (Crytek Sponza) entries
// loses hits on them.
TEST_F(TraversalVariants, ScenesNeedDeepStacks) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  const nlohmann::json four = bench("-D TS_KD_STACK_SIZE=4", ""), eight = bench("-D TS_KD_STACK_SIZE=8", "");
  ASSERT_EQ(four.size(), 2u);
  ASSERT_EQ(eight.size(), 2u);
  EXPECT_NE(four[0]["kernels"]["primary"]["hits_xxh64"], (*default_)[0]["kernels"]["primary"]["hits_xxh64"]);
  EXPECT_NE(eight[1]["kernels"]["primary"]["hits_xxh64"], (*default_)[1]["kernels"]["primary"]["hits_xxh64"]);
}

// Two __local entries for the first 32 work items of each 8 x 8 group: the others keep the private
// stack only, so both ways run in every group.
TEST_F(TraversalVariants, LocalStackWithSpillsAndWorkItemsWithoutSlice) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  expect_default_hits("-D TS_KD_LOCAL_STACK=2 -D TS_KD_LOCAL_STACK_THREADS=32", "");
}

TEST_F(TraversalVariants, LocalStackOfEightEntries) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  expect_default_hits("-D TS_KD_LOCAL_STACK=8", "");
}

TEST_F(TraversalVariants, LocalStackOfSixteenEntries) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  expect_default_hits("-D TS_KD_LOCAL_STACK=16", "");
}

// Shadow rays from their far end: any order gives an any-hit ray the same answer.
TEST_F(TraversalVariants, ShadowRaysFarChildFirst) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  expect_default_hits("-D TS_KD_SHADOW_FAR_FIRST=1", "");
}

TEST_F(TraversalVariants, PersistentWorkGroups) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  // 1 group per compute unit: each takes many blocks
  expect_default_hits("", "--schedule persistent --persistent-groups 1");
}

// Work-groups in the order of what they cost in the pass before (the warm-up in grid order); the
// same rays, so the same hits.
TEST_F(TraversalVariants, LongestFirstWorkGroups) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  EXPECT_EQ(expect_default_hits("", "--schedule longest-first")[0]["schedule"], "longest-first");
  EXPECT_EQ((*default_)[0]["schedule"], "grid");
  EXPECT_FALSE((*default_)[0].contains("costs_from_yaw_degrees"));
  // the order learnt once, from the view turned 10 degrees; the pictures of the costs, a group 8 x 8 pixels
  const std::string prefix = (dir_->path() / "costs").string();
  const auto turned = expect_default_hits("", "--schedule longest-first --costs-from-yaw 10 --cost-map " + prefix);
  ASSERT_EQ(turned.size(), 2u);
  EXPECT_EQ(turned[0]["costs_from_yaw_degrees"], 10.0);
  EXPECT_EQ(turned[1]["cost_maps"], nlohmann::json::array({prefix + "-crytek-primary.png", prefix + "-crytek-shadow.png",
                                                           prefix + "-crytek-diffuse.png"}));
  const ImageRgba8 shadow_costs = read_image(prefix + "-bunny-shadow.png");
  EXPECT_EQ(shadow_costs.width(), 40);  // 5 groups of 8
  EXPECT_EQ(shadow_costs.height(), 40);
}

TEST_F(TraversalVariants, DiffuseRaysInOctantOrder) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  expect_default_hits("", "--diffuse-order octant --sort-group 16x8");  // 40 x 40: partial groups at the edges
}

// Rays written to device memory by an untimed kernel and traced by one that only reads them: the
// very rays, so the very hit records.
TEST_F(TraversalVariants, StoredRays) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  expect_default_hits("", "--rays stored");
  EXPECT_EQ((*default_)[0]["rays"], "generated");
  EXPECT_EQ(bench("", "--rays stored")[0]["rays"], "stored");
}

// `--shadow-rays facing`: only the pixels whose surface faces the light cast a shadow ray, the rays
// the renderers cast. Fewer rays, other answers; the primary and diffuse rays do not change, and the
// host (its CPU packets, and its counts of --stats) casts the very rays with the very answers.
TEST_F(TraversalVariants, ShadowRaysFacingTheLight) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  const nlohmann::json facing = bench("", "--shadow-rays facing");
  ASSERT_EQ(facing.size(), 2u);
  ASSERT_EQ(default_->size(), 2u);
  const auto host = testing::run_command((testing::binary_dir() / "worker/tessera-bench").string() + " rays " +
                                         (dir_->path() / "bunny.tpk").string() + " " + (dir_->path() / "crytek.tpk").string() +
                                         " --device host --size 40 --passes 5 --no-embree --stats --shadow-rays facing --json");
  ASSERT_EQ(host.exit_code, 0) << host.output;
  const nlohmann::json on_host = nlohmann::json::parse(host.output);
  ASSERT_EQ(on_host.size(), 2u);
  for (size_t scene = 0; scene < 2; ++scene) {
    SCOPED_TRACE((*default_)[scene]["scene"].get<std::string>());
    EXPECT_EQ((*default_)[scene]["shadow_rays"], "all");
    EXPECT_EQ(facing[scene]["shadow_rays"], "facing");
    const auto& all = (*default_)[scene]["kernels"];
    const auto& some = facing[scene]["kernels"];
    for (const char* kind : {"primary", "diffuse"}) EXPECT_EQ(all[kind]["hits_xxh64"], some[kind]["hits_xxh64"]) << kind;
    const uint64_t cast = some["shadow"]["rays"].get<uint64_t>(), every = all["shadow"]["rays"].get<uint64_t>();
    EXPECT_GT(cast, 0u);
    EXPECT_LT(cast, every);
    EXPECT_NE(some["shadow"]["hits_xxh64"], all["shadow"]["hits_xxh64"]);
    EXPECT_EQ(on_host[scene]["kernels"]["shadow"]["hits_xxh64"], some["shadow"]["hits_xxh64"]);
    EXPECT_EQ(on_host[scene]["kernels"]["shadow"]["rays"].get<uint64_t>(), cast);
    EXPECT_EQ(on_host[scene]["traversal_per_ray"]["shadow"]["rays"].get<uint64_t>(), cast);
  }
}

// `--stats` counts what each ray does with the traversal GPUs run: real work, consistent counts.
TEST_F(TraversalVariants, StatsCountTheTraversal) {
  const auto r = testing::run_command((testing::binary_dir() / "worker/tessera-bench").string() + " rays " +
                                      (dir_->path() / "crytek.tpk").string() +
                                      " --device host --size 32 --passes 5 --no-embree --stats --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto stats = nlohmann::json::parse(r.output)[0]["traversal_per_ray"];
  for (const char* kind : {"primary", "shadow", "diffuse"}) {
    SCOPED_TRACE(kind);
    const auto& k = stats[kind];
    EXPECT_GT(k["rays"].get<uint64_t>(), 32u * 32u / 2u);
    EXPECT_GT(k["inner"].get<double>(), 5.0);
    EXPECT_GT(k["triangles"].get<double>(), 1.0);
    EXPECT_GE(k["nodes"].get<double>(), k["inner"].get<double>() + k["leaves"].get<double>());
    EXPECT_GE(k["pushes"].get<double>(), k["pops"].get<double>());
    EXPECT_GT(k["warp_efficiency"].get<double>(), 0.2);
    EXPECT_LE(k["warp_efficiency"].get<double>(), 1.0);
  }
  // a closest-hit ray takes every far child it pushed back off the stack (or skips it there)
  EXPECT_DOUBLE_EQ(stats["primary"]["pushes"].get<double>(), stats["primary"]["pops"].get<double>());
}

TEST(TraversalVariantOptions, BadValuesAreRefused) {
  const std::string bench = (testing::binary_dir() / "worker/tessera-bench").string() + " rays none.tpk ";
  for (const char* flags : {"--schedule sometimes", "--diffuse-order random", "--sort-group 32x16", "--shadow-rays some",
                            "--diffuse-order octant --schedule persistent", "--diffuse-order octant --schedule longest-first"}) {
    const auto r = testing::run_command(bench + flags);
    EXPECT_NE(r.exit_code, 0) << flags;
    EXPECT_NE(r.output.find(std::string(flags).substr(0, 8)), std::string::npos) << r.output;
  }
  for (const char* flags : {"--rays cached", "--rays stored --schedule persistent", "--rays stored --schedule longest-first",
                            "--rays stored --device host",
                            "--rays stored --diffuse-order octant"}) {
    const auto r = testing::run_command(bench + flags);
    EXPECT_EQ(r.exit_code, 2) << flags << ": " << r.output;
    EXPECT_NE(r.output.find("--rays"), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
}

TEST(TraversalVariantOptions, CostOptionsNeedTheLongestFirstSchedule) {
  const std::string bench = (testing::binary_dir() / "worker/tessera-bench").string() + " rays none.tpk ";
  for (const char* flags : {"--costs-from-yaw 5", "--costs-from-yaw 5 --schedule persistent", "--cost-map c",
                            "--cost-map c --schedule longest-first --device host",
                            "--cost-map no/such/folder/c --schedule longest-first",
                            "--costs-from-yaw 5 --schedule longest-first --device host", "--costs-from-yaw 95 --schedule longest-first"}) {
    const auto r = testing::run_command(bench + flags);
    EXPECT_EQ(r.exit_code, 2) << flags << ": " << r.output;
    EXPECT_NE(r.output.find(std::string(flags).substr(0, 10)), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
}

// The render switches are checked when a program starts: one error line naming the variable and a
// non-zero exit, before a scene is read (none.tpk does not exist) or a worker listens.
TEST(TraversalVariantOptions, BadRenderSwitchesAreRefusedAtStart) {
  const auto bin = testing::binary_dir() / "worker";
  const std::string programs[] = {(bin / "tessera-render").string() + " none.tpk -o none.png",
                                  (bin / "tessera-bench").string() + " rays none.tpk",
                                  (bin / "tessera-worker").string() + " --scenes . --secret-file none.secret"};
  const std::pair<const char*, const char*> switches[] = {{"TESSERA_PT_WAVES=0", "bad TESSERA_PT_WAVES '0'"},
                                                          {"TESSERA_PT_WAVES=3x", "bad TESSERA_PT_WAVES '3x'"},
                                                          {"TESSERA_PERSISTENT_GROUPS=-2", "bad TESSERA_PERSISTENT_GROUPS '-2'"},
                                                          {"TESSERA_PT_REGISTERS=8", "bad TESSERA_PT_REGISTERS '8'"},
                                                          {"TESSERA_KD_LAYOUT=bfs", "TESSERA_KD_LAYOUT must be"}};
  for (const std::string& program : programs)
    for (const auto& [assignment, message] : switches) {
      const auto r = testing::run_command(std::string(assignment) + " " + program);
      EXPECT_EQ(r.exit_code, 1) << assignment << " " << program << ": " << r.output;
      EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
      EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    }
}

// pathtrace_paths and pathtrace_paths_tiles (the GPU code path's batches) with persistent
// work-groups (TESSERA_PERSISTENT_GROUPS): the very same pixels as one work item a pixel, in the
// plain variant (no atomically added reprojections whose order could change a sum's last bit).
TEST(PersistentPathTrace, SamePixelsAsOneWorkItemAPixel) {
  if (!opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  TempDir dir("persistent_pathtrace");
  pack::PackOptions o;
  o.input = testing::source_dir() / "scene-packer/scenes/pt_teapot.scene.txtpb";
  o.output = dir / "s.tpk";
  o.include_dirs = {testing::shared_dir() / "scenes"};
  o.show_progress = false;
  o.zstd_level = 1;
  pack::pack_scene(o);
  const PackedScene scene = PackedScene::load(dir / "s.tpk");
  CameraSpec head;
  head.pose = pose_from_manifest(scene.manifest().camera());
  head.vertical_fov_degrees = scene.manifest().camera().vertical_fov_degrees();
  const StereoCameras c = make_stereo_cameras(head, default_ipd(scene.manifest()), kPathWidth, kPathHeight);
  PtView view;
  view.eyes = {c.left, c.right};
  const RenderSettings settings = default_pathtrace_settings(scene);
  PathTraceSettings pt;
  pt.variant = PtVariant::plain;
  pt.spp = 2;
  pt.median = false;
  for (const char* cpu_paths : {"on", "off"}) {  // off: the GPU code path, tiles in batches
    ScopedEnv paths("TESSERA_CPU_PATHS", cpu_paths);
    auto render = [&] {
      PathTraceRenderer renderer(scene, {{"cpu", std::nullopt, 0}, 0});
      EXPECT_EQ(renderer.launches_batches(), std::string(cpu_paths) == "off");
      return render_pathtrace_frame(renderer, view, settings, pt, 16, true);  // 16: several tiles
    };
    const PtFrameResult plain = render();
    PtFrameResult persistent;
    {
      ScopedEnv groups("TESSERA_PERSISTENT_GROUPS", "1");  // a group a compute unit: each takes many blocks
      persistent = render();
    }
    EXPECT_EQ(plain.totals.segments, persistent.totals.segments) << cpu_paths;
    EXPECT_GT(plain.totals.segments, uint64_t(kPathWidth) * kPathHeight) << cpu_paths;
    for (int e = 0; e < 2; ++e) EXPECT_TRUE(plain.eyes[e] == persistent.eyes[e]) << "eye " << e << ", CPU paths " << cpu_paths;
  }
  ScopedEnv bad("TESSERA_PERSISTENT_GROUPS", "lots");
  EXPECT_THROW(PathTraceRenderer(scene, {{"cpu", std::nullopt, 0}, 0}), Error);
}

}  // namespace
}  // namespace tessera
