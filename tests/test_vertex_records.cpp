// Quantized vertices in memory: one 16-byte record a vertex with the position decoded, and a normal
// index beside it, built at load time from the .tpk's split sections (common/scene/vertex_records.h).
// They must give every position, normal and texture coordinate the split form gives, bit for bit.
#include <gtest/gtest.h>

#include <cstring>

#include "common/render/scene_uploads.h"
#include "common/scene/packed_scene.h"
#include "common/scene/vertex_records.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"

namespace tessera {
namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

TEST(VertexRecords, HoldTheDecodedPositionAndTexcoordWithNormalsApart) {
  const std::vector<uint32_t> vertices = {0x3FFFFFFFu, 1u | 7u << 16, 5u | 1u << 10, 0u | 65535u << 16};
  const std::vector<uint32_t> cells = {3u | 4u << 16, 5u, 65535u | 1u << 16, 65535u};
  const std::vector<uint16_t> texcoords = {1, 2, 65535, 32768};
  const float anchor[3] = {-2.5f, 0.0f, 10.0f};
  const PositionDecoding decoding = position_decoding(anchor, 0.25f, /*linear=*/false);
  const auto records = make_vertex_records(vertices, cells, texcoords, decoding);
  ASSERT_EQ(records.size(), 8u);
  // vertex 0: cell 1 (65535, 1, 65535), offsets 1023 each: the far corner of that cell
  EXPECT_EQ(records[0], bits(-2.5f + 65536.0f * 0.25f));
  EXPECT_EQ(records[1], bits(0.0f + 2.0f * 0.25f));
  EXPECT_EQ(records[2], bits(10.0f + 65536.0f * 0.25f));
  EXPECT_EQ(records[3], 1u | 2u << 16);
  // vertex 1: cell 0 (3, 4, 5), offsets (5, 1, 0), as the kernels' shared decode gives them
  const float3 p = decode_quantized_position(5u | 1u << 10, 3u | 4u << 16, 5u, -2.5f, 0.0f, 10.0f, 0.25f, decoding.step, 0u);
  EXPECT_EQ(records[4], bits(p.x));
  EXPECT_EQ(records[5], bits(p.y));
  EXPECT_EQ(records[6], bits(p.z));
  EXPECT_GT(p.x, -2.5f + 3.0f * 0.25f);
  EXPECT_LT(p.x, -2.5f + 4.0f * 0.25f);
  EXPECT_EQ(records[7], 65535u | 32768u << 16);
  const auto plain = make_vertex_records(vertices, cells, {}, decoding);
  EXPECT_EQ(plain[3], 0u);
  EXPECT_EQ(plain[7], 0u);
  EXPECT_EQ(make_normal_indices(vertices), (std::vector<uint16_t>{7, 65535}));
}

TEST(VertexRecords, LoadedSceneReadsWhatTheSplitSectionsHold) {
  testing::TempDir dir("vertex_records");
  // A textured, lit quad and a triangle far apart, so their vertices fall in different cells.
  testing::write_text(dir / "quad.obj",
                      "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 40 30 -20\nv 41 30 -20\nv 40 31.5 -19\n"
                      "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvt 0.25 0.75\n"
                      "vn 0 0 1\nvn 0.6 0 0.8\n"
                      "f 1/1/1 2/2/1 3/3/2\nf 1/1/1 3/3/2 4/4/1\nf 5/5/2 6/2/1 7/4/2\n");
  pack::PackOptions o;
  o.input = dir / "quad.obj";
  o.output = dir / "quad.tpk";
  o.quantize = {true, true, true};
  o.show_progress = false;
  pack::pack_scene(o);
  const PackedScene scene = PackedScene::load(o.output);
  const SceneView view = scene.host_view();
  ASSERT_TRUE(view.flags & TS_SCENE_POSITIONS_QUANTIZED);
  ASSERT_TRUE(view.flags & TS_SCENE_NORMALS_QUANTIZED);
  ASSERT_TRUE(view.flags & TS_SCENE_TEXCOORDS_QUANTIZED);
  const auto words = scene.section_as<uint32_t>(tpk::QUANTIZED_VERTICES);
  const auto cells = scene.section_as<uint32_t>(tpk::CELL_TABLE);
  const auto uv = scene.section_as<uint16_t>(tpk::TEXCOORDS_QUANTIZED);
  const auto& table = scene.normal_table();
  ASSERT_EQ(scene.vertex_records().size(), 4u * scene.vertex_count());
  for (uint32_t v = 0; v < scene.vertex_count(); ++v) {
    SCOPED_TRACE("vertex " + std::to_string(v));
    const uint32_t cell = words[2 * v + 1] & 0xFFFFu, normal = words[2 * v + 1] >> 16;
    const auto& q = scene.manifest().quantization();
    ASSERT_EQ(q.position_decode(), tpk::LINEAR);  // what the packer writes
    const float3 expected = decode_quantized_position(words[2 * v], cells[2 * cell], cells[2 * cell + 1], q.anchor().x(),
                                                      q.anchor().y(), q.anchor().z(), q.cell_size(),
                                                      q.cell_size() / TS_POSITION_OFFSET_LEVELS, 1u);
    const float3 p = scene_vertex_position(&view, v);
    EXPECT_EQ(bits(p.x), bits(expected.x));
    EXPECT_EQ(bits(p.y), bits(expected.y));
    EXPECT_EQ(bits(p.z), bits(expected.z));
    const float3 n = scene_vertex_normal(&view, v);
    EXPECT_EQ(bits(n.x), bits(ts_half_bits_to_float(table[3 * normal])));
    EXPECT_EQ(bits(n.y), bits(ts_half_bits_to_float(table[3 * normal + 1])));
    EXPECT_EQ(bits(n.z), bits(ts_half_bits_to_float(table[3 * normal + 2])));
    const float2 t = scene_vertex_texcoord(&view, v, 0.5f);
    EXPECT_EQ(t.x, float(uv[2 * v]) * 0.5f);
    EXPECT_EQ(t.y, float(uv[2 * v + 1]) * 0.5f);
  }
}

// Devices keep a triangle's three vertex indices in 8 bytes when every index is below 2^21
// (TS_SCENE_PACKED_TRIANGLES); scene_triangle_indices gives back the very indices in both widths.
TEST(PackedTriangles, IndicesRoundTripInBothWidths) {
  const uint32_t top = TS_PACKED_TRIANGLE_MAX_VERTICES - 1;
  const std::vector<uint32_t> full = {0, 1, 2, top, 0, top, 2047, 2048, top - 1, 0x155555u, 0x0AAAAAu, 1u << 20};
  std::vector<uint32_t> packed;
  for (size_t t = 0; t < full.size() / 3; ++t) {
    const uint2 w = scene_pack_triangle(full[3 * t], full[3 * t + 1], full[3 * t + 2]);
    packed.push_back(w.x);
    packed.push_back(w.y);
  }
  SceneView wide{}, narrow{};
  wide.triangles = full.data();
  narrow.triangles = packed.data();
  narrow.flags = TS_SCENE_PACKED_TRIANGLES;
  for (uint32_t t = 0; t < full.size() / 3; ++t) {
    for (const SceneView* view : {&wide, &narrow}) {
      const uint4 i = scene_triangle_indices(view, t);
      EXPECT_EQ(i.x, full[3 * t]) << t;
      EXPECT_EQ(i.y, full[3 * t + 1]) << t;
      EXPECT_EQ(i.z, full[3 * t + 2]) << t;
    }
  }
}

// The compact profile's 6-byte triangles (TS_SCENE_SHORT_TRIANGLES): offsets of 16 bits from each
// block's lowest index give back the very indices; a block spanning 2^16 vertices or more keeps the
// triangles as they were (nothing written).
TEST(ShortTriangles, IndicesRoundTripAndABlockTooWideIsRefused) {
  std::vector<uint32_t> indices;
  for (uint32_t t = 0; t < 3 * TS_TRIANGLE_BLOCK + 5; ++t) {  // four blocks, the last one short
    const uint32_t base = 1000000u + 7u * t;
    indices.insert(indices.end(), {base, base + 0xFFFFu - 7u * (t % TS_TRIANGLE_BLOCK), base + 3u});
  }
  std::vector<uint32_t> words, bases;
  ASSERT_TRUE(short_triangle_indices(indices, words, bases));
  const uint32_t triangles = uint32_t(indices.size() / 3);
  EXPECT_EQ(words.size(), triangles + (triangles + 1) / 2);  // 6 bytes a triangle, padded to a word
  EXPECT_EQ(bases.size(), 4u);
  SceneView view{};
  view.flags = TS_SCENE_SHORT_TRIANGLES;
  view.triangle_count = triangles;
  view.triangles = words.data();
  view.triangle_bases = bases.data();
  for (uint32_t t = 0; t < triangles; ++t) {
    const uint4 i = scene_triangle_indices(&view, t);
    EXPECT_EQ(i.x, indices[3 * t]) << t;
    EXPECT_EQ(i.y, indices[3 * t + 1]) << t;
    EXPECT_EQ(i.z, indices[3 * t + 2]) << t;
  }
  std::vector<uint32_t> too_wide = indices;
  too_wide[3 * (2 * TS_TRIANGLE_BLOCK) + 1] += 0x10000u;  // the third block spans 2^16 + 3 vertices
  std::vector<uint32_t> untouched_words = {42}, untouched_bases = {43};
  EXPECT_FALSE(short_triangle_indices(too_wide, untouched_words, untouched_bases));
  EXPECT_EQ(untouched_words, std::vector<uint32_t>{42});
  EXPECT_EQ(untouched_bases, std::vector<uint32_t>{43});
}

}  // namespace
}  // namespace tessera
