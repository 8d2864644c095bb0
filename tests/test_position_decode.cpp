// How quantized positions decode (proto/tpk.proto PositionDecode, docs/scene-memory.md "The decode"):
// files of format version 6 decode linearly, fma(cell * 1023 + offset, cell_size / 1023, anchor), older
// files as before. Every decode site (the load-time records of the fast profile, the compact profile's
// absolute and wide-cell vertices, the CPU's lane-parallel gather) gives the same floats for either
// decode; the manifest field round-trips, an unknown value is one error; a file packed with the
// earlier decode loads with it and both profiles still trace the same hits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "common/base/error.h"
#include "common/scene/packed_scene.h"
#include "common/scene/vertex_records.h"
#include "kernels/scene/scene_gather.h"
#include "opencl_test_support.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"

namespace tessera {
namespace {

using testing::TempDir;

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

TEST(PositionDecode, LinearIsOneFmaOfCellTimes1023PlusOffset) {
  const float anchor[3] = {-12.375f, 0.1f, 3.0e3f};
  const PositionDecoding d = position_decoding(anchor, 0.0371f, /*linear=*/true);
  EXPECT_EQ(bits(d.step), bits(0.0371f / 1023.0f));
  int differing = 0;
  for (uint32_t cell : {0u, 1u, 7u, 640u, 2047u, 4095u, 65535u})
    for (uint32_t offset : {0u, 1u, 511u, 512u, 1000u, 1023u}) {
      const uint32_t offsets = offset | (1023u - offset) << 10 | offset << 20;
      const float3 p = decode_quantized_position(offsets, cell | cell << 16, cell, anchor[0], anchor[1], anchor[2],
                                                 d.cell_size, d.step, 1u);
      EXPECT_EQ(bits(p.x), bits(std::fma(float(cell * 1023u + offset), d.step, anchor[0])));
      EXPECT_EQ(bits(p.y), bits(std::fma(float(cell * 1023u + 1023u - offset), d.step, anchor[1])));
      EXPECT_EQ(bits(p.z), bits(std::fma(float(cell * 1023u + offset), d.step, anchor[2])));
      // the same real number as the earlier decode, not always the same float
      const float3 old = decode_quantized_position(offsets, cell | cell << 16, cell, anchor[0], anchor[1], anchor[2],
                                                   d.cell_size, d.step, 0u);
      EXPECT_NEAR(p.x, old.x, 1e-6 * (std::fabs(old.x) + 2500.0));
      differing += bits(p.x) != bits(old.x) || bits(p.y) != bits(old.y) || bits(p.z) != bits(old.z);
    }
  EXPECT_GT(differing, 0);
}

// Four triangles over eight vertices in cells from 0 to the absolute vertex's largest, traced through
// every form a device may hold them in.
TEST(PositionDecode, EveryDecodeSiteGivesTheSameFloats) {
  const uint32_t cell_coords[4][3] = {{0, 0, 0}, {3, 2047, 9}, {2047, 1, 4095}, {1000, 1500, 2000}};
  const uint32_t offset_of[8][3] = {{0, 0, 0},     {1023, 1023, 1023}, {5, 700, 1},   {512, 3, 999},
                                    {1, 1022, 77}, {300, 301, 302},    {1023, 0, 13}, {640, 641, 642}};
  std::vector<uint32_t> tpk_vertices, cells;
  for (const auto& c : cell_coords) cells.insert(cells.end(), {c[0] | c[1] << 16, c[2]});
  for (uint32_t v = 0; v < 8; ++v) tpk_vertices.insert(tpk_vertices.end(), {offset_of[v][0] | offset_of[v][1] << 10 | offset_of[v][2] << 20, v % 4});
  const std::vector<uint32_t> triangles = {0, 1, 2, 3, 4, 5, 6, 7, 0, 5, 2, 7};
  const uint32_t tris[TS_SIMD_LANES] = {0, 1, 2, 3};
  const float anchor[3] = {-1.5f, 20.25f, -300.0f};
  for (bool linear : {true, false}) {
    SCOPED_TRACE(linear ? "linear" : "cell plus offset");
    std::vector<uint32_t> absolute;
    for (uint32_t v = 0; v < 8; ++v) {
      const uint32_t *c = cell_coords[v % 4], *o = offset_of[v];
      const uint2 w = scene_pack_absolute_vertex(scene_absolute_coordinate(c[0], o[0], linear),
                                                 scene_absolute_coordinate(c[1], o[1], linear),
                                                 scene_absolute_coordinate(c[2], o[2], linear));
      absolute.insert(absolute.end(), {w.x, w.y});
    }
    const PositionDecoding d = position_decoding(anchor, 0.013f, linear);
    const std::vector<uint32_t> records = make_vertex_records(tpk_vertices, cells, {}, d);
    SceneView fast{}, compact{}, wide{};
    fast.flags = TS_SCENE_POSITIONS_QUANTIZED;
    fast.vertex_records = records.data();
    for (SceneView* v : {&compact, &wide}) {
      v->flags = TS_SCENE_POSITIONS_QUANTIZED | TS_SCENE_CELL_VERTICES | (linear ? TS_SCENE_LINEAR_POSITIONS : 0u);
      v->anchor_x = anchor[0];
      v->anchor_y = anchor[1];
      v->anchor_z = anchor[2];
      v->cell_size = d.cell_size;
      v->position_step = d.step;
    }
    compact.quantized_vertices = absolute.data();
    wide.flags |= TS_SCENE_WIDE_CELLS;
    wide.quantized_vertices = tpk_vertices.data();
    wide.cells = cells.data();
    for (SceneView* v : {&fast, &compact, &wide}) v->triangles = triangles.data();
    for (const SceneView* v : {&compact, &wide}) {
      for (uint32_t vertex = 0; vertex < 8; ++vertex) {
        const float3 a = scene_vertex_position(&fast, vertex), b = scene_vertex_position(v, vertex);
        EXPECT_EQ(bits(a.x), bits(b.x)) << vertex;
        EXPECT_EQ(bits(a.y), bits(b.y)) << vertex;
        EXPECT_EQ(bits(a.z), bits(b.z)) << vertex;
      }
      TriangleBatch batch;
      scene_gather_triangles(v, tris, &batch);
      for (uint32_t lane = 0; lane < TS_SIMD_LANES; ++lane)
        for (uint32_t k = 0; k < 3; ++k) {
          const float3 p = scene_vertex_position(&fast, triangles[3 * lane + k]);
          EXPECT_EQ(bits(batch.p[k][0][lane]), bits(p.x)) << lane << " " << k;
          EXPECT_EQ(bits(batch.p[k][1][lane]), bits(p.y)) << lane << " " << k;
          EXPECT_EQ(bits(batch.p[k][2][lane]), bits(p.z)) << lane << " " << k;
        }
    }
  }
}

pack::PackOptions bunny_options(const std::filesystem::path& output, bool linear) {
  pack::PackOptions o;
  o.input = testing::scene_path("stanford_bunny/bun_zipper_res4.ply");
  o.output = output;
  o.show_progress = false;
  o.zstd_level = 1;
  o.quantize.linear_positions = linear;
  return o;
}

TEST(TpkPositionDecode, TheFieldRoundTripsAndAnUnknownValueIsOneError) {
  TempDir dir("tpk_position_decode");
  pack::pack_scene(bunny_options(dir / "new.tpk", true));
  pack::pack_scene(bunny_options(dir / "old.tpk", false));
  const PackedScene fresh = PackedScene::load(dir / "new.tpk"), old = PackedScene::load(dir / "old.tpk");
  EXPECT_EQ(fresh.manifest().quantization().position_decode(), tpk::LINEAR);
  EXPECT_EQ(fresh.manifest().format_version(), 6u);
  EXPECT_EQ(old.manifest().quantization().position_decode(), tpk::CELL_PLUS_OFFSET);
  EXPECT_EQ(old.manifest().format_version(), 4u);  // what the packer wrote before version 6
  const SceneView fresh_view = fresh.host_view(SceneMemory::compact), old_view = old.host_view(SceneMemory::compact);
  EXPECT_TRUE(fresh_view.flags & TS_SCENE_LINEAR_POSITIONS);
  EXPECT_EQ(bits(fresh_view.position_step), bits(fresh.manifest().quantization().cell_size() / 1023.0f));
  EXPECT_FALSE(old_view.flags & TS_SCENE_LINEAR_POSITIONS);

  // The same file claiming a decode this build does not know: refused, naming the value, in one line.
  TpkContents contents = read_tpk(dir / "new.tpk");
  contents.manifest.mutable_quantization()->set_position_decode(tpk::PositionDecode(7));
  write_tpk(dir / "unknown.tpk", contents.manifest, contents.sections, 1);
  try {
    PackedScene::load(dir / "unknown.tpk");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown.tpk: invalid scene: unknown position decode 7"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

// A file of the earlier decode keeps it: its fast profile's records hold the earlier floats (for some
// vertex not the linear ones), and both profiles trace the same hits on the host and on PoCL's GPU
// code path, where the decode is compiled into the kernels.
TEST(SceneMemoryEarlierDecode, FilesPackedBeforeVersion6LoadAndBothProfilesAgree) {
  TempDir dir("earlier_decode");
  pack::pack_scene(bunny_options(dir / "old.tpk", false));
  const PackedScene old = PackedScene::load(dir / "old.tpk");
  const auto& q = old.manifest().quantization();
  const float anchor[3] = {q.anchor().x(), q.anchor().y(), q.anchor().z()};
  const PositionDecoding earlier = position_decoding(anchor, q.cell_size(), false);
  const PositionDecoding linear = position_decoding(anchor, q.cell_size(), true);
  const auto words = old.section_as<uint32_t>(tpk::QUANTIZED_VERTICES);
  const auto cells = old.section_as<uint32_t>(tpk::CELL_TABLE);
  EXPECT_EQ(old.vertex_records(), make_vertex_records(words, cells, {}, earlier));
  EXPECT_NE(old.vertex_records(), make_vertex_records(words, cells, {}, linear));

  auto bench = [&](const std::string& device, const std::string& memory) {
    const auto r = testing::run_command((testing::binary_dir() / "worker/tessera-bench").string() + " rays " +
                                        (dir / "old.tpk").string() + " --device " + device +
                                        " --size 48 --passes 5 --no-embree --json --scene-memory " + memory);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.exit_code == 0 ? nlohmann::json::parse(r.output) : nlohmann::json::array();
  };
  auto expect_same_hits = [&](const std::string& device) {
    const nlohmann::json fast = bench(device, "fast"), compact = bench(device, "compact");
    ASSERT_EQ(fast.size(), 1u);
    ASSERT_EQ(compact.size(), 1u);
    EXPECT_EQ(compact[0]["scene_memory"], "compact");
    for (const char* kind : {"primary", "shadow", "diffuse"})
      EXPECT_EQ(fast[0]["kernels"][kind]["hits_xxh64"], compact[0]["kernels"][kind]["hits_xxh64"]) << device << " " << kind;
  };
  expect_same_hits("host");
  if (testing::opencl_available()) {
    testing::ScopedEnv paths("TESSERA_CPU_PATHS", "off");
    expect_same_hits("cpu");
  }
}

}  // namespace
}  // namespace tessera
