// The .tpk format end to end: pack real scenes, load them back, and make sure corrupt, truncated
// or wrong-version files are clear errors; packing is deterministic; bad input leaves no file.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/scene/mesh_loader.h"
#include "common/scene/packed_scene.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"

namespace tessera {
namespace {

using testing::TempDir;

pack::PackOptions options_for(const std::filesystem::path& input, const std::filesystem::path& output) {
  pack::PackOptions o;
  o.input = input;
  o.output = output;
  o.show_progress = false;
  o.zstd_level = 3;
  return o;
}

TEST(Tpk, RoundTripKeepsGeometry) {
  TempDir dir("tpk_roundtrip");
  for (const char* quantize : {"none", "pos", "pos,norm", "pos,norm,tex"}) {
    SCOPED_TRACE(quantize);
    auto o = options_for(testing::scene_path("teapot/teapot_lowpoly.obj"), dir / "t.tpk");
    const std::string q = quantize;
    o.quantize = {q != "none", q.find("norm") != std::string::npos, q.find("tex") != std::string::npos};
    const auto report = pack::pack_scene(o);
    const PackedScene scene = PackedScene::load(dir / "t.tpk");
    EXPECT_EQ(scene.triangle_count(), report.manifest.triangles());
    EXPECT_EQ(scene.manifest().SerializeAsString(), report.manifest.SerializeAsString());
    // Decoded positions stay within the quantization bound of the source mesh.
    const TriangleMesh source = load_mesh(testing::scene_path("teapot/teapot_lowpoly.obj"));
    const SceneView view = scene.host_view();
    const double step = q == "none" ? 0.0 : scene.manifest().quantization().cell_size() / 1023.0;
    for (uint32_t t = 0; t < scene.triangle_count(); t += 7) {
      const float3 p = scene_vertex_position(&view, view.triangles[3 * t]);
      double best = 1e30;  // nearest source vertex
      for (size_t v = 0; v < source.vertex_count(); ++v) {
        const auto s = source.position(uint32_t(v));
        best = std::min(best, double(std::fabs(s[0] - p.x) + std::fabs(s[1] - p.y) + std::fabs(s[2] - p.z)));
      }
      EXPECT_LE(best, 1.5 * step + 1e-5);
    }
    EXPECT_EQ((view.flags & TS_SCENE_HAS_NORMALS) != 0, true);
  }
}

TEST(Tpk, PackingIsDeterministic) {
  TempDir dir("tpk_determinism");
  pack::pack_scene(options_for(testing::scene_path("stanford_bunny/bun_zipper_res4.ply"), dir / "a.tpk"));
  pack::pack_scene(options_for(testing::scene_path("stanford_bunny/bun_zipper_res4.ply"), dir / "b.tpk"));
  EXPECT_EQ(read_file_bytes(dir / "a.tpk"), read_file_bytes(dir / "b.tpk"));
}

TEST(Tpk, EveryByteFlipAndTruncationIsDetected) {
  TempDir dir("tpk_corrupt");
  pack::pack_scene(options_for(testing::scene_path("cornell_box/cornell_box.obj"), dir / "c.tpk"));
  const std::vector<uint8_t> good = read_file_bytes(dir / "c.tpk");
  ASSERT_NO_THROW(parse_tpk(good, "c.tpk"));
  std::mt19937 rng(11);
  // Every header and manifest byte, then a sample of section bytes.
  std::vector<size_t> positions;
  for (size_t i = 0; i < std::min<size_t>(good.size(), 512); ++i) positions.push_back(i);
  for (int i = 0; i < 300; ++i) positions.push_back(rng() % good.size());
  for (size_t pos : positions) {
    std::vector<uint8_t> bad = good;
    bad[pos] ^= uint8_t(1u << (rng() % 8));
    EXPECT_THROW(PackedScene::from_contents(parse_tpk(bad, "c.tpk"), "c.tpk"), Error) << "flip at byte " << pos;
  }
  for (size_t cut : {size_t(0), size_t(7), size_t(23), good.size() / 3, good.size() - 1}) {
    const std::vector<uint8_t> truncated(good.begin(), good.begin() + cut);
    EXPECT_THROW(parse_tpk(truncated, "c.tpk"), Error) << "truncated to " << cut;
  }
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_THROW(parse_tpk(longer, "c.tpk"), Error);
}

TEST(Tpk, WrongVersionIsAClearError) {
  TempDir dir("tpk_version");
  pack::pack_scene(options_for(testing::scene_path("cornell_box/cornell_box.obj"), dir / "c.tpk"));
  std::vector<uint8_t> bytes = read_file_bytes(dir / "c.tpk");
  bytes[8] = 99;
  try {
    parse_tpk(bytes, "c.tpk");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("format version 99"), std::string::npos) << e.what();
  }
}

TEST(Tpk, ReplicationMultipliesTheScene) {
  TempDir dir("tpk_replicate");
  auto o = options_for(testing::scene_path("stanford_bunny/bun_zipper_res4.ply"), dir / "r.tpk");
  const auto single = pack::pack_scene(o);
  o.replicate = {2, 1, 3};
  const auto grid = pack::pack_scene(o);
  EXPECT_EQ(grid.manifest.triangles(), 6 * single.manifest.triangles());
  const auto& b = grid.manifest.bounds();
  EXPECT_GT(b.max().x() - b.min().x(), 2.0f * (single.manifest.bounds().max().x() - single.manifest.bounds().min().x()));
}

// ---- bad input through the real program ----

struct PackRun {
  int exit_code;
  std::string output;
};

PackRun run_pack(const std::string& args) {
  const auto r = testing::run_command((testing::binary_dir() / "tessera-pack").string() + " " + args);
  return {r.exit_code, r.output};
}

void expect_one_line_error(const PackRun& run, const std::string& needle) {
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.output.find("error"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find(needle), std::string::npos) << run.output;
  EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1) << run.output;
}

TEST(TesseraPack, BadInputGivesOneErrorLineAndNoFile) {
  TempDir dir("pack_bad");
  const auto out = dir / "out.tpk";
  const std::string o = " -o " + out.string();
  testing::write_text(dir / "garbage.obj", "v 0 0 0\nv 1 0 0\nv 0 1 zero\nf 1 2 3\n");
  testing::write_text(dir / "range.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n");
  testing::write_text(dir / "nan.obj", "v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n");
  testing::write_text(dir / "inf.obj", "v 0 0 0\nv 1 0 0\nv 0 1e999 0\nf 1 2 3\n");
  testing::write_text(dir / "empty.obj", "# nothing\nv 0 0 0\n");
  testing::write_text(dir / "flat.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n");
  expect_one_line_error(run_pack((dir / "missing.obj").string() + o), "missing.obj");
  expect_one_line_error(run_pack((dir / "garbage.obj").string() + o), "garbage.obj:3:");
  expect_one_line_error(run_pack((dir / "range.obj").string() + o), "range.obj:4:");
  expect_one_line_error(run_pack((dir / "nan.obj").string() + o), "nan.obj:2:");
  expect_one_line_error(run_pack((dir / "inf.obj").string() + o), "inf.obj:3:");
  expect_one_line_error(run_pack((dir / "empty.obj").string() + o), "no triangles");
  expect_one_line_error(run_pack((dir / "flat.obj").string() + o), "degenerate");
  const std::string cornell = testing::scene_path("cornell_box/cornell_box.obj").string();
  expect_one_line_error(run_pack(cornell + o + " --quantize pos,tex"), "--quantize");
  expect_one_line_error(run_pack(cornell + o + " --kdtree octree"), "--kdtree");
  expect_one_line_error(run_pack(cornell + o + " --replicate 2,2"), "--replicate");
  expect_one_line_error(run_pack(cornell + " -o " + (dir / "no/such/dir/x.tpk").string()), "x.tpk");
  EXPECT_FALSE(std::filesystem::exists(out));
  // Nothing else (no temporary file) was left behind either.
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().extension(), ".obj") << entry.path();
}

TEST(TesseraPack, JsonReportHasTheTableFields) {
  TempDir dir("pack_json");
  const auto r = testing::run_command((testing::binary_dir() / "tessera-pack").string() + " " +
                                      testing::scene_path("teapot/teapot.obj").string() + " -o " +
                                      (dir / "t.tpk").string() + " --json --kdtree choi");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto json = nlohmann::json::parse(r.output);
  EXPECT_EQ(json["triangles"].get<uint64_t>() + json["degenerate_triangles_dropped"].get<uint64_t>(), 6320u);
  for (const char* key : {"vertices", "quantization", "sections", "bytes", "bytes_per_triangle", "kdtree", "build_seconds",
                          "peak_memory_bytes"})
    EXPECT_TRUE(json.contains(key)) << key;
  EXPECT_EQ(json["kdtree"]["variant"], "choi");
  EXPECT_GT(json["kdtree"]["leaves"].get<uint64_t>(), 0u);
  EXPECT_GT(json["quantization"]["geometry_cells"].get<uint64_t>(), 0u);
}

}  // namespace
}  // namespace tessera
