// Crafted packed scenes with valid checksums: offsets and counts that overflow, sections the
// manifest does not call for, sizes that would make a loader allocate gigabytes. Each must be a
// clear error at load time, on the worker (PackedScene) and on the master (SceneFile) alike.
#include <gtest/gtest.h>

#include <limits>
#include <zstd.h>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/base/hash.h"
#include "common/base/memory_usage.h"
#include "common/base/zstd_codec.h"
#include "common/scene/packed_scene.h"
#include "master/cluster/scene_file.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"

namespace tessera {
namespace {

using testing::TempDir;

// A packed Cornell box, taken apart so a test can change it and seal it again.
TpkContents packed_cornell_box(const TempDir& dir) {
  pack::PackOptions o;
  o.input = testing::scene_path("cornell_box/cornell_box.obj");
  o.output = dir / "cornell.tpk";
  o.show_progress = false;
  o.zstd_level = 1;
  pack::pack_scene(o);
  return read_tpk(o.output);
}

// Writes the scene with correct checksums (write_tpk) and returns the file's bytes.
std::vector<uint8_t> seal(const TempDir& dir, TpkContents contents) {
  write_tpk(dir / "crafted.tpk", contents.manifest, contents.sections, 1);
  return read_file_bytes(dir / "crafted.tpk");
}

std::string load_error(const std::vector<uint8_t>& file) {
  try {
    PackedScene::from_contents(parse_tpk(file, "crafted.tpk"), "crafted.tpk");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TpkSectionData* find(TpkContents& c, tpk::SectionKind kind) {
  for (auto& s : c.sections)
    if (s.kind == kind) return &s;
  return nullptr;
}

// One 2x2 texture on the first material, its texels appended as a TEXELS section.
void add_texture(TpkContents& c, uint64_t texel_offset) {
  tpk::Texture* t = c.manifest.add_textures();
  t->set_name("crafted");
  t->set_width(2);
  t->set_height(2);
  t->set_texel_offset(texel_offset);
  t->set_mip_levels(1);  // level 0 alone
  c.manifest.mutable_materials(0)->set_texture(0);
  c.sections.push_back(make_section(tpk::TEXELS, std::vector<uint32_t>(4, 0xFF00FF00u)));
}

TEST(TpkValidation, UntouchedSceneLoads) {
  TempDir dir("tpkv_ok");
  TpkContents c = packed_cornell_box(dir);
  add_texture(c, 0);
  EXPECT_EQ(load_error(seal(dir, c)), "");
}

TEST(TpkValidation, TextureOffsetThatWrapsAroundIsRefusedByWorkerAndMaster) {
  TempDir dir("tpkv_texture_wrap");
  TpkContents c = packed_cornell_box(dir);
  // offset + 4 texels wraps to 1 in 64 bits; truncated to 32 bits it points far outside.
  add_texture(c, ~uint64_t(0) - 2);
  const auto file = seal(dir, c);
  EXPECT_NE(load_error(file).find("lies outside the texel data"), std::string::npos) << load_error(file);
  EXPECT_THROW(master::SceneFile::load(dir / "crafted.tpk"), Error);
  // Past the texels by one, and beyond 32 bits: refused too.
  for (uint64_t offset : {uint64_t(1), uint64_t(1) << 32}) {
    c.manifest.mutable_textures(0)->set_texel_offset(offset);
    EXPECT_NE(load_error(seal(dir, c)), "") << offset;
  }
}

TEST(TpkValidation, MipLevelsBeyondTheChainOrTheTexelsAreRefused) {
  TempDir dir("tpkv_mips");
  TpkContents c = packed_cornell_box(dir);
  add_texture(c, 0);
  c.manifest.mutable_textures(0)->set_mip_levels(3);  // a 2x2 texture has 2 levels
  EXPECT_NE(load_error(seal(dir, c)).find("bad mip level count"), std::string::npos) << load_error(seal(dir, c));
  c.manifest.mutable_textures(0)->set_mip_levels(0);  // version 3 files say how many
  EXPECT_NE(load_error(seal(dir, c)).find("bad mip level count"), std::string::npos);
  c.manifest.mutable_textures(0)->set_mip_levels(2);  // 5 texels, the section holds 4
  EXPECT_NE(load_error(seal(dir, c)).find("lies outside the texel data"), std::string::npos) << load_error(seal(dir, c));
  find(c, tpk::TEXELS)->raw.resize(20, 0xFF);
  EXPECT_EQ(load_error(seal(dir, c)), "");
}

TEST(TpkValidation, MasterRefusesWhatAWorkerWouldRefuse) {
  TempDir dir("tpkv_master");
  TpkContents c = packed_cornell_box(dir);
  // Checksums are right, but a triangle names a vertex that does not exist.
  find(c, tpk::TRIANGLES)->raw[0] = 0xFF;
  find(c, tpk::TRIANGLES)->raw[3] = 0x7F;
  seal(dir, c);
  EXPECT_THROW(master::SceneFile::load(dir / "crafted.tpk"), Error);
}

TEST(TpkValidation, QuantizedTexcoordsOnlyWhereTheManifestSaysSo) {
  TempDir dir("tpkv_texcoords");
  TpkContents c = packed_cornell_box(dir);
  ASSERT_FALSE(c.manifest.quantization().texcoords());
  const uint64_t nv = c.manifest.vertices();
  c.sections.push_back(make_section(tpk::TEXCOORDS, std::vector<float>(2 * nv, 0.5f)));
  // A 4-byte quantized-texcoord section the renderer would read for every vertex.
  c.sections.push_back(make_section(tpk::TEXCOORDS_QUANTIZED, std::vector<uint16_t>(2, 0)));
  EXPECT_NE(load_error(seal(dir, c)).find("TEXCOORDS_QUANTIZED"), std::string::npos);
  // Quantized texcoords of the wrong size, where the manifest does call for them.
  c.sections.pop_back();
  c.sections.pop_back();
  c.manifest.mutable_quantization()->set_texcoords(true);
  c.sections.push_back(make_section(tpk::TEXCOORDS_QUANTIZED, std::vector<uint16_t>(2 * nv - 2, 0)));
  EXPECT_NE(load_error(seal(dir, c)).find("TEXCOORDS_QUANTIZED holds"), std::string::npos);
}

TEST(TpkValidation, TexcoordsThatWouldOverflowATextureLookupAreRefused) {
  TempDir dir("tpkv_texcoord_range");
  TpkContents c = packed_cornell_box(dir);
  add_texture(c, 0);
  std::vector<float> uv(2 * c.manifest.vertices(), 0.5f);
  c.sections.push_back(make_section(tpk::TEXCOORDS, uv));
  EXPECT_EQ(load_error(seal(dir, c)), "");
  for (float bad : {4.25353e+37f, -70000.0f, std::numeric_limits<float>::quiet_NaN()}) {
    uv[3] = bad;
    c.sections.back() = make_section(tpk::TEXCOORDS, uv);
    EXPECT_NE(load_error(seal(dir, c)).find("texture coordinate out of range"), std::string::npos) << bad;
  }
}

TEST(TpkValidation, UnknownSectionKindIsRefused) {
  TempDir dir("tpkv_unknown");
  TpkContents c = packed_cornell_box(dir);
  c.sections.push_back({tpk::SectionKind(99), std::vector<uint8_t>(1024, 0)});
  EXPECT_NE(load_error(seal(dir, c)).find("unknown section kind 99"), std::string::npos) << load_error(seal(dir, c));
}

// A zstd frame that does not declare its decompressed size (as a crafted file would have).
std::vector<uint8_t> frame_without_size(const std::vector<uint8_t>& raw) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  std::vector<uint8_t> out(ZSTD_compressBound(raw.size()));
  const size_t size = ZSTD_compress2(cctx, out.data(), out.size(), raw.data(), raw.size());
  ZSTD_freeCCtx(cctx);
  out.resize(size);
  return out;
}

// The sections of `c` as frames without a size; `raw_size` of TRIANGLES declared as given.
std::vector<uint8_t> with_declared_triangle_bytes(TpkContents c, uint64_t declared) {
  std::vector<std::vector<uint8_t>> stored;
  c.manifest.clear_sections();
  for (const auto& s : c.sections) {
    stored.push_back(frame_without_size(s.raw));
    tpk::Section* e = c.manifest.add_sections();
    e->set_kind(s.kind);
    e->set_raw_size(s.kind == tpk::TRIANGLES ? declared : s.raw.size());
    e->set_raw_xxh64(hash64(s.raw.data(), s.raw.size()));
    e->set_stored_xxh64(hash64(stored.back().data(), stored.back().size()));
  }
  return assemble_tpk(c.manifest, stored);
}

TEST(TpkValidation, DeclaredSizeBeyondTheCountsIsRefusedBeforeAllocating) {
  TempDir dir("tpkv_bomb_size");
  const TpkContents c = packed_cornell_box(dir);
  const auto file = with_declared_triangle_bytes(c, 1536ull << 20);
  const uint64_t peak_before = peak_resident_bytes();
  EXPECT_NE(load_error(file).find("TRIANGLES holds"), std::string::npos) << load_error(file);
  EXPECT_LT(peak_resident_bytes() - peak_before, 256ull << 20);
}

TEST(TpkValidation, DecodingAllocatesForWhatTheFrameHoldsNotWhatItClaims) {
  TempDir dir("tpkv_bomb_counts");
  TpkContents c = packed_cornell_box(dir);
  // Counts that allow 1.5 GB of triangles, and a file that holds a few hundred bytes of them.
  c.manifest.set_triangles(128ull << 20);
  const auto file = with_declared_triangle_bytes(c, 12 * (128ull << 20));
  ASSERT_LT(file.size(), 64u << 10);
  const uint64_t peak_before = peak_resident_bytes();
  EXPECT_NE(load_error(file).find("TRIANGLES"), std::string::npos) << load_error(file);
  EXPECT_LT(peak_resident_bytes() - peak_before, 256ull << 20);
}

TEST(ZstdCodec, StreamingDecodeRefusesFramesLongerOrShorterThanExpected) {
  std::vector<uint8_t> raw(300000);
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = uint8_t(i * 31 % 251);
  const auto frame = frame_without_size(raw);
  EXPECT_EQ(zstd_decompress(frame, raw.size()), raw);
  EXPECT_THROW(zstd_decompress(frame, raw.size() - 1), Error);
  EXPECT_THROW(zstd_decompress(frame, raw.size() + 1), Error);
  const std::vector<uint8_t> cut(frame.begin(), frame.begin() + frame.size() / 2);
  EXPECT_THROW(zstd_decompress(cut, raw.size()), Error);
  EXPECT_EQ(zstd_decompress(zstd_compress({}, 3), 0), std::vector<uint8_t>{});
}

}  // namespace
}  // namespace tessera
