// The two scene-memory profiles (common/scene/scene_memory.h, docs/scene-memory.md): the compact
// one (12-byte vertices decoded in the triangle test, the .tpk's larger-leaf tree) traces the very
// hits of the fast one on the host, on PoCL's CPU code path and on the GPU code path, in fewer bytes;
// `--scene-memory auto` picks a profile by the budget and refuses, with the bytes, a scene that
// fits in neither; a cluster mixing the profiles renders tessera-render's frames.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "cluster_test_support.h"
#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/base/hash.h"
#include "common/render/scene_uploads.h"
#include "opencl_test_support.h"
#include "scene-packer/packer.h"
#include "pack_test_support.h"
#include "test_helpers.h"
#include "worker/daemon/scene_store.h"
#include "worker/render/scene_memory_choice.h"

namespace tessera {
namespace {

using testing::ScopedEnv;
using testing::TempDir;


class SceneMemoryHits : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("scene_memory");
    testing::pack_for_test(testing::scene_path("stanford_bunny/bunny.obj"), std::nullopt, dir_->path() / "bunny.tpk");
    testing::pack_for_test(testing::scene_path("crytek_sponza/sponza.obj.zst"),
         testing::source_dir() / "scene-packer/scenes/crytek_sponza.scene.txtpb", dir_->path() / "crytek.tpk");
  }
  static void TearDownTestSuite() { delete dir_; }

  // `tessera-bench rays --json` on both scenes in one profile.
  static nlohmann::json bench(const std::string& device, const std::string& memory) {
    const auto r = testing::run_command((testing::binary_dir() / "worker/tessera-bench").string() + " rays " +
                                        (dir_->path() / "bunny.tpk").string() + " " + (dir_->path() / "crytek.tpk").string() +
                                        " --device " + device + " --size 48 --passes 5 --no-embree --json --scene-memory " + memory);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.exit_code == 0 ? nlohmann::json::parse(r.output) : nlohmann::json::array();
  }

  static void expect_same_hits(const std::string& device) {
    const nlohmann::json fast = bench(device, "fast"), compact = bench(device, "compact");
    ASSERT_EQ(fast.size(), 2u);
    ASSERT_EQ(compact.size(), 2u);
    for (size_t scene = 0; scene < 2; ++scene) {
      SCOPED_TRACE(fast[scene]["scene"].get<std::string>());
      EXPECT_EQ(fast[scene]["scene_memory"], "fast");
      EXPECT_EQ(compact[scene]["scene_memory"], "compact");
      for (const char* kind : {"primary", "shadow", "diffuse"}) {
        EXPECT_EQ(fast[scene]["kernels"][kind]["hits_xxh64"], compact[scene]["kernels"][kind]["hits_xxh64"]) << kind;
        EXPECT_EQ(fast[scene]["kernels"][kind]["rays"], compact[scene]["kernels"][kind]["rays"]) << kind;
      }
      EXPECT_LT(compact[scene]["mesh_tree_bytes_per_triangle"].get<double>(),
                0.8 * fast[scene]["mesh_tree_bytes_per_triangle"].get<double>());
    }
  }

  static TempDir* dir_;
};

TempDir* SceneMemoryHits::dir_ = nullptr;

TEST_F(SceneMemoryHits, CompactTracesTheFastHitsOnTheHost) { expect_same_hits("host"); }

TEST_F(SceneMemoryHits, CompactTracesTheFastHitsOnPoclCpuPaths) {
  if (!testing::opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  expect_same_hits("cpu");
}

TEST_F(SceneMemoryHits, CompactTracesTheFastHitsOnPoclGpuPath) {
  if (!testing::opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  ScopedEnv paths("TESSERA_CPU_PATHS", "off");
  expect_same_hits("cpu");
}

TEST_F(SceneMemoryHits, CrytekSponzaCompactFitsThirtyBytesATriangle) {
  const PackedScene scene = PackedScene::load(dir_->path() / "crytek.tpk");
  ASSERT_TRUE(scene.has_compact_tree());
  const SceneFootprint compact = scene_footprint(scene, KdNodeLayout{}, SceneMemory::compact);
  const SceneFootprint fast = scene_footprint(scene, KdNodeLayout{}, SceneMemory::fast);
  EXPECT_LE(double(compact.mesh_tree_bytes) / scene.triangle_count(), 30.0);
  EXPECT_GT(double(fast.mesh_tree_bytes) / scene.triangle_count(), 40.0);
}

// The compact profile's 6-byte triangles where the file's order spans 2^16 or more vertices in a block
// of triangles: a vertex the first material's triangle and the last material's share lies some 67,000
// vertices before the last one's others, so its vertices are laid out anew (a copy where the last use
// lies too far back) and every triangle still has the very positions, texture coordinates and normals.
TEST(SceneMemoryLayout, VerticesLaidOutAnewForShortTrianglesKeepEveryTriangle) {
  TempDir dir("short_triangles");
  std::string obj = "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0.25 0.5\nvn 0 0 1\n";
  constexpr int kSide = 260;  // 67,600 vertices in the middle material
  for (int j = 0; j < kSide; ++j)
    for (int i = 0; i < kSide; ++i)
      obj += "v " + std::to_string(2 + i * 0.01) + " " + std::to_string(j * 0.01) + " " + std::to_string(0.001 * ((i * j) % 7)) + "\n";
  obj += "v 0 0 1\nv 1 0 1\n";
  obj += "usemtl a\nf 1/1/1 2/1/1 3/1/1\nusemtl b\n";
  for (int j = 0; j + 1 < kSide; ++j)
    for (int i = 0; i + 1 < kSide; ++i) {
      const int a = 4 + j * kSide + i;
      obj += "f " + std::to_string(a) + " " + std::to_string(a + 1) + " " + std::to_string(a + kSide) + "\n";
    }
  const int last = 4 + kSide * kSide;
  obj += "usemtl c\nf 1/1/1 " + std::to_string(last) + "/1/1 " + std::to_string(last + 1) + "/1/1\n";
  testing::write_text(dir.path() / "m.mtl", "newmtl a\nKd 1 0 0\nnewmtl b\nKd 0 1 0\nnewmtl c\nKd 0 0 1\n");
  testing::write_text(dir.path() / "far.obj", obj);
  testing::pack_for_test(dir.path() / "far.obj", std::nullopt, dir.path() / "far.tpk");
  const PackedScene scene = PackedScene::load(dir.path() / "far.tpk");
  std::vector<uint32_t> words, bases;
  ASSERT_FALSE(short_triangle_indices(scene.section_as<uint32_t>(tpk::TRIANGLES), words, bases));  // in the file's order
  const SceneUploads uploads(scene, KdNodeLayout{}, SceneMemory::compact);
  ASSERT_TRUE(uploads.constants.flags & TS_SCENE_SHORT_TRIANGLES);
  EXPECT_GT(uploads.windowed_words.size() / 2, size_t(scene.vertex_count()));  // copies
  SceneView compact = scene.host_view(SceneMemory::compact);
  scene_view_set_constants(&compact, &uploads.constants);
  auto buffer = [&](const char* name) {
    for (const auto& u : uploads.geometry)
      if (u.name == name) return u.bytes.data();
    return static_cast<const uint8_t*>(nullptr);
  };
  compact.triangles = reinterpret_cast<const uint32_t*>(buffer("triangles"));
  compact.triangle_bases = reinterpret_cast<const uint32_t*>(buffer("triangle_bases"));
  compact.quantized_vertices = reinterpret_cast<const uint32_t*>(buffer("quantized_vertices"));
  compact.texcoords_q = reinterpret_cast<const uint16_t*>(buffer("texcoords_quantized"));
  compact.normal_indices = reinterpret_cast<const uint16_t*>(buffer("normal_indices"));
  const SceneView fast = scene.host_view(SceneMemory::fast);
  for (uint32_t t = 0; t < scene.triangle_count(); ++t) {
    float3 a[3], b[3];
    scene_triangle_vertices(&fast, t, &a[0], &a[1], &a[2]);
    scene_triangle_vertices(&compact, t, &b[0], &b[1], &b[2]);
    const uint4 fi = scene_triangle_indices(&fast, t), ci = scene_triangle_indices(&compact, t);
    for (int c = 0; c < 3; ++c) {
      ASSERT_TRUE(a[c].x == b[c].x && a[c].y == b[c].y && a[c].z == b[c].z) << "triangle " << t << " corner " << c;
      const uint32_t fv = c == 0 ? fi.x : c == 1 ? fi.y : fi.z, cv = c == 0 ? ci.x : c == 1 ? ci.y : ci.z;
      const float2 fu = scene_vertex_texcoord(&fast, fv, 1.0f), cu = scene_vertex_texcoord(&compact, cv, 1.0f);
      ASSERT_TRUE(fu.x == cu.x && fu.y == cu.y) << "triangle " << t << " corner " << c;
      const float3 fn = scene_vertex_normal(&fast, fv), cn = scene_vertex_normal(&compact, cv);
      ASSERT_TRUE(fn.x == cn.x && fn.y == cn.y && fn.z == cn.z) << "triangle " << t << " corner " << c;
    }
  }
}

TEST(SceneMemoryChoice, AutoPicksByTheBudgetAndRefusesWithTheBytes) {
  TempDir dir("scene_memory_choice");
  testing::pack_for_test(testing::scene_path("stanford_bunny/bunny.obj"), std::nullopt, dir / "bunny.tpk");
  const PackedScene scene = PackedScene::load(dir / "bunny.tpk");
  const uint64_t fast = scene_footprint(scene, kd_node_layout_from_environment(), SceneMemory::fast).device_bytes;
  const uint64_t compact = scene_footprint(scene, kd_node_layout_from_environment(), SceneMemory::compact).device_bytes;
  ASSERT_LT(compact, fast);
  auto budget = [](uint64_t bytes) { return SceneMemoryBudget{bytes, 0, "--gpu-mem-limit test"}; };
  EXPECT_EQ(choose_scene_memory(scene, SceneMemoryMode::automatic, budget(fast)).memory, SceneMemory::fast);
  EXPECT_EQ(choose_scene_memory(scene, SceneMemoryMode::automatic, budget(fast - 1)).memory, SceneMemory::compact);
  EXPECT_EQ(choose_scene_memory(scene, SceneMemoryMode::automatic, budget(compact)).memory, SceneMemory::compact);
  // A largest allocation below the fast profile's kd-tree buffer also forces the compact one.
  const SceneFootprint f = scene_footprint(scene, kd_node_layout_from_environment(), SceneMemory::fast);
  uint64_t largest_fast = 0;
  for (const auto& b : f.buffers) largest_fast = std::max(largest_fast, b.bytes);
  uint64_t largest_compact = 0;
  for (const auto& b : scene_footprint(scene, kd_node_layout_from_environment(), SceneMemory::compact).buffers)
    largest_compact = std::max(largest_compact, b.bytes);
  if (largest_compact < largest_fast) {
    EXPECT_EQ(choose_scene_memory(scene, SceneMemoryMode::automatic, SceneMemoryBudget{0, largest_compact, "test"}).memory,
              SceneMemory::compact);
  }
  try {
    choose_scene_memory(scene, SceneMemoryMode::automatic, budget(compact - 1));
    ADD_FAILURE() << "a budget below the compact profile was accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(std::to_string(compact) + " bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("compact profile"), std::string::npos) << message;
    EXPECT_NE(message.find("--gpu-mem-limit test"), std::string::npos) << message;
  }
  // Asked for one profile, no budget is consulted.
  EXPECT_EQ(choose_scene_memory(scene, SceneMemoryMode::fast, budget(1)).memory, SceneMemory::fast);
  EXPECT_EQ(choose_scene_memory(scene, SceneMemoryMode::compact, budget(1)).memory, SceneMemory::compact);
}

TEST(SceneMemoryChoice, ScenesWithoutACompactTreeTraceTheirOneTreeInBothProfiles) {
  TempDir dir("scene_memory_one_tree");
  const auto report = testing::pack_for_test(testing::scene_path("stanford_bunny/bun_zipper_res4.ply"), std::nullopt, dir / "b.tpk", 0.0);
  EXPECT_FALSE(report.compact_kdtree.has_value());
  const PackedScene scene = PackedScene::load(dir / "b.tpk");
  EXPECT_FALSE(scene.has_compact_tree());
  EXPECT_EQ(&scene.kd_nodes(SceneMemory::compact), &scene.kd_nodes(SceneMemory::fast));
  const SceneView view = scene.host_view(SceneMemory::compact);
  EXPECT_TRUE(view.flags & TS_SCENE_CELL_VERTICES);
  // Every vertex decodes in the test to the very floats the fast profile decoded at load.
  const SceneView fast = scene.host_view(SceneMemory::fast);
  for (uint32_t v = 0; v < scene.vertex_count(); ++v) {
    const float3 a = scene_vertex_position(&view, v), b = scene_vertex_position(&fast, v);
    ASSERT_TRUE(a.x == b.x && a.y == b.y && a.z == b.z) << "vertex " << v;
  }
}

// A worker whose budget holds one scene in neither profile refuses it with the bytes it needs and
// still serves the scenes that fit.
TEST(SceneMemoryChoice, TooSmallABudgetRefusesThatSceneOnly) {
  TempDir dir("scene_memory_store");
  testing::pack_for_test(testing::scene_path("stanford_bunny/bunny.obj"), std::nullopt, dir / "bunny.tpk");
  testing::pack_for_test(testing::scene_path("cornell_box/cornell_box.obj"), std::nullopt, dir / "cornell.tpk");
  const PackedScene bunny = PackedScene::load(dir / "bunny.tpk");
  const PackedScene cornell = PackedScene::load(dir / "cornell.tpk");
  const uint64_t cornell_fast = scene_footprint(cornell, kd_node_layout_from_environment(), SceneMemory::fast).device_bytes;
  const uint64_t bunny_compact = scene_footprint(bunny, kd_node_layout_from_environment(), SceneMemory::compact).device_bytes;
  ASSERT_LT(cornell_fast, bunny_compact);
  RendererOptions host;
  host.device = "host";
  host.host_threads = 1;
  host.gpu_memory_limit = bunny_compact - 1;
  worker::SceneStore store(dir.path(), host, 2, 0);
  try {
    store.load(bunny.content_hash());
    ADD_FAILURE() << "the bunny was loaded over its budget";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(bunny_compact) + " bytes"), std::string::npos) << e.what();
  }
  const auto loaded = store.load(cornell.content_hash());
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->memory, SceneMemory::fast);
  // With room for the bunny's compact profile only, auto takes that one.
  RendererOptions roomier = host;
  roomier.gpu_memory_limit = bunny_compact;
  worker::SceneStore second(dir.path(), roomier, 2, 0);
  EXPECT_EQ(second.load(bunny.content_hash())->memory, SceneMemory::compact);
}

// Two workers, one in each profile, on PoCL and the host: the frames equal tessera-render's, and
// the master's statistics name each worker's profile.
TEST(SceneMemoryCluster, MixedProfilesRenderTheSingleMachineFrame) {
  if (!testing::opencl_available()) GTEST_SKIP() << "no OpenCL platform";
  TempDir dir("scene_memory_cluster");
  const auto secret = dir / "secret", scenes = dir / "scenes";
  testing::write_secret(secret, testing::kClusterSecret);
  std::filesystem::create_directories(scenes);
  std::filesystem::copy_file(testing::cornell_tpk(), scenes / "cornell.tpk");
  testing::WorkerProcess a(dir.path(), "a", scenes, secret, {"--device", "host", "--threads", "1", "--scene-memory", "compact"});
  testing::WorkerProcess b(dir.path(), "b", scenes, secret, {"--device", "cpu", "--scene-memory", "fast"});
  ASSERT_FALSE(a.address().empty()) << a.log();
  ASSERT_FALSE(b.address().empty()) << b.log();
  testing::write_text(dir / "poses.csv", std::string("0,") + testing::kCornellPose + "\n");
  const auto r = testing::run_command("timeout 60 " + testing::master_binary().string() + " --workers " + a.address() + "," +
                                      b.address() + " --scene " + testing::cornell_tpk().string() + " --secret-file " +
                                      secret.string() + " --no-status --size 96x64 --tile 16 --schedule static --poses " +
                                      (dir / "poses.csv").string() + " --out " + (dir / "out").string() + " --stats " +
                                      (dir / "out/stats.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output << a.log() << b.log();
  EXPECT_EQ(read_image(dir / "out/frame_000000.png"),
            testing::reference_render(testing::cornell_tpk(), testing::kCornellPose, "96x64", dir / "ref.png", "host"));
  const auto stats = nlohmann::json::parse(read_file_text(dir / "out/stats.json"));
  const auto memory = stats["summary"]["scene_memory"];
  ASSERT_EQ(memory.size(), 2u) << stats["summary"].dump();
  EXPECT_EQ(memory[0], "compact");
  EXPECT_EQ(memory[1], "fast");
  for (const auto& w : stats["frames"][0]["workers"]) EXPECT_GT(w["tiles"].get<int>(), 0);
  EXPECT_NE(a.log().find("compact scene memory"), std::string::npos) << a.log();
  EXPECT_NE(r.output.find("compact scene memory"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tessera
