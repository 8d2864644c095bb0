// A small, legal scene that decodes to gigabytes: a texture of zeros compresses to almost nothing.
// Loaders hold the declared sizes to a budget before decompressing (refusing with one clear line),
// and a worker indexes such a file at start-up without decoding it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <zstd.h>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/base/hash.h"
#include "common/base/memory_usage.h"
#include "common/scene/mip_chain.h"
#include "common/scene/packed_scene.h"
#include "common/scene/tpk_decode_budget.h"
#include "cluster_test_support.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"
#include "worker/daemon/scene_store.h"

namespace tessera {
namespace {

using testing::TempDir;

// zstd_compress sizes its output for the worst case: a 1.3 GB buffer. A stream keeps it small.
std::vector<uint8_t> compress_in_pieces(std::span<const uint8_t> raw) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setPledgedSrcSize(cctx, raw.size());
  std::vector<uint8_t> out, piece(ZSTD_CStreamOutSize());
  ZSTD_inBuffer in{raw.data(), raw.size(), 0};
  for (;;) {
    ZSTD_outBuffer o{piece.data(), piece.size(), 0};
    const size_t left = ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_end);
    out.insert(out.end(), piece.data(), piece.data() + o.pos);
    if (ZSTD_isError(left)) throw Error(ZSTD_getErrorName(left));
    if (left == 0) break;
  }
  ZSTD_freeCCtx(cctx);
  return out;
}

// The packed Cornell box with one side x side texture of zeros (every mip level) on its first
// material: a file of a few hundred kilobytes whose texels alone take 5.3 * side^2 bytes.
std::vector<uint8_t> zero_texture_scene(const TempDir& dir, uint32_t side) {
  pack::PackOptions o;
  o.input = testing::scene_path("cornell_box/cornell_box.obj");
  o.output = dir / "cornell.tpk";
  o.show_progress = false;
  o.zstd_level = 1;
  pack::pack_scene(o);
  TpkContents c = read_tpk(o.output);
  tpk::Texture* t = c.manifest.add_textures();
  t->set_name("zeros");
  t->set_width(side);
  t->set_height(side);
  t->set_mip_levels(full_mip_levels(side, side));
  c.manifest.mutable_materials(0)->set_texture(0);
  const uint64_t texel_bytes = 4 * mip_chain_texels(side, side, t->mip_levels());
  // calloc'd pages that are only read stay the kernel's shared zero page: no gigabyte is resident.
  const std::unique_ptr<uint8_t, decltype(&std::free)> zeros(static_cast<uint8_t*>(std::calloc(texel_bytes, 1)), &std::free);
  std::vector<std::vector<uint8_t>> stored;
  c.manifest.clear_sections();
  auto add = [&](tpk::SectionKind kind, std::span<const uint8_t> raw) {
    stored.push_back(compress_in_pieces(raw));
    tpk::Section* e = c.manifest.add_sections();
    e->set_kind(kind);
    e->set_raw_size(raw.size());
    e->set_raw_xxh64(hash64(raw.data(), raw.size()));
    e->set_stored_xxh64(hash64(stored.back().data(), stored.back().size()));
  };
  for (const auto& s : c.sections) add(s.kind, s.raw);
  add(tpk::TEXELS, {zeros.get(), texel_bytes});
  return assemble_tpk(c.manifest, stored);
}

DecodeBudget gpu_limit(uint64_t bytes) { return lower_total(host_decode_budget(), bytes, "--gpu-mem-limit"); }

TEST(DecodeBudget, ASceneThatDecodesBeyondTheBudgetIsRefusedBeforeDecoding) {
  TempDir dir("decode_budget");
  const auto file = zero_texture_scene(dir, 8192);  // 358 MB of texels
  ASSERT_LT(file.size(), 1u << 20);
  const uint64_t peak_before = peak_resident_bytes();
  try {
    parse_tpk(file, "zeros.tpk", gpu_limit(100u << 20));
    FAIL() << "a scene of 358 MB was decoded within a budget of 100 MB";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("zeros.tpk: scene decodes to 341.3 MB, more than --gpu-mem-limit (100.0 MB); "
                                          "refused before decoding (largest: texels 341.3 MB, ", 0), 0u)
        << e.what();
  }
  EXPECT_LT(peak_resident_bytes() - peak_before, 64u << 20);
  // One section above the device's largest buffer.
  DecodeBudget device = host_decode_budget();
  device.section_bytes = 64u << 20;
  device.section_limit = "the device's largest buffer";
  try {
    parse_tpk(file, "zeros.tpk", device);
    FAIL() << "a 341 MB section went past a 64 MB buffer limit";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("section TEXELS decodes to 341.3 MB, more than the device's largest buffer"),
              std::string::npos)
        << e.what();
  }
  // Within the budget it loads.
  EXPECT_NO_THROW(PackedScene::from_contents(parse_tpk(file, "zeros.tpk", gpu_limit(1u << 30)), "zeros.tpk"));
}

TEST(DecodeBudget, TesseraRenderRefusesTheSceneUnderGpuMemLimitWithOneLine) {
  TempDir dir("decode_budget_render");
  const auto file = zero_texture_scene(dir, 8192);
  write_file_atomically(dir / "zeros.tpk", file.data(), file.size());
  const auto r = testing::run_command(testing::render_binary().string() + " " + testing::shell_word(dir / "zeros.tpk") +
                                      " --device host --gpu-mem-limit 100M --size 16x16 -o " + testing::shell_word(dir / "out.png"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("tessera-render: error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("on the device, more than --gpu-mem-limit (100.0 MB); refused before decoding"), std::string::npos)
      << r.output;
}

TEST(DecodeBudget, AWorkerIndexesScenesWithoutDecodingThemAndLoadsWithinItsBudget) {
  TempDir packs("decode_budget_packs"), dir("decode_budget_store");
  const auto file = zero_texture_scene(packs, 16384);  // 1.33 GB of texels in a few hundred kilobytes
  write_file_atomically(dir / "zeros.tpk", file.data(), file.size());
  const uint64_t hash = hash64(file.data(), file.size());
  RendererOptions host;
  host.device = "host";
  host.host_threads = 1;
  const uint64_t peak_before = peak_resident_bytes();
  const auto start = std::chrono::steady_clock::now();
  worker::SceneStore store(dir.path(), host, 1, 0, gpu_limit(500u << 20));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_LT(peak_resident_bytes() - peak_before, 128u << 20);
  EXPECT_TRUE(store.has(hash));
  try {
    store.load(hash);
    FAIL() << "1.3 GB decoded under a 500 MB budget";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than --gpu-mem-limit (500.0 MB)"), std::string::npos) << e.what();
  }
  EXPECT_LT(peak_resident_bytes() - peak_before, 128u << 20);
}

}  // namespace
}  // namespace tessera
