// Texture filtering: the packer's mip chains (sizes, linear-light box filter, cut-out coverage),
// the kernels' level choice from ray cones and trilinear lookup, version 2 files without mip levels,
// and the picture: a finely checkered floor at a grazing angle comes out closer to a supersampled
// reference with mip levels and ray cones than with one unfiltered sample per pixel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/base/hash.h"
#include "common/image/image.h"
#include "common/image/metrics.h"
#include "common/image/png_io.h"
#include "common/render/camera_setup.h"
#include "common/render/shading_data.h"
#include "common/scene/mip_chain.h"
#include "common/scene/packed_scene.h"
#include "kernels/render/ray_cone.h"
#include "kernels/shading/surface.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"
#include "worker/render/aa_frame.h"
#include "worker/render/frame_render.h"
#include "worker/render/tile_renderer.h"

namespace tessera {
namespace {

using testing::TempDir;

TextureImage solid(uint32_t w, uint32_t h, std::array<uint8_t, 4> rgba) {
  TextureImage t;
  t.width = w;
  t.height = h;
  for (uint32_t i = 0; i < w * h; ++i) t.rgba.insert(t.rgba.end(), rgba.begin(), rgba.end());
  return t;
}

double alpha_coverage(const uint8_t* rgba, size_t texels) {
  size_t passing = 0;
  for (size_t i = 0; i < texels; ++i) passing += rgba[4 * i + 3] >= 128;
  return double(passing) / double(texels);
}

TEST(MipChain, LevelCountsAndSizesStayWithinAThird) {
  EXPECT_EQ(full_mip_levels(1, 1), 1u);
  EXPECT_EQ(full_mip_levels(1024, 512), 11u);
  EXPECT_EQ(full_mip_levels(5, 3), 3u);  // 5x3, 2x1, 1x1
  EXPECT_EQ(mip_chain_texels(5, 3, 3), 15u + 2u + 1u);
  EXPECT_EQ(stored_mip_levels(1024, 1024), 11u) << "square: the full chain";
  EXPECT_EQ(stored_mip_levels(1000, 600), full_mip_levels(1000, 600));
  EXPECT_LT(stored_mip_levels(64, 1), full_mip_levels(64, 1)) << "a full chain of 64 x 1 would double it";
  for (auto [w, h] : {std::pair{1024u, 1024u}, {1024u, 512u}, {1000u, 600u}, {513u, 257u}, {64u, 1u}, {4096u, 8u}}) {
    const uint64_t base = uint64_t(w) * h;
    const uint64_t chain = mip_chain_texels(w, h, stored_mip_levels(w, h));
    EXPECT_LE(double(chain), 1.34 * double(base)) << w << "x" << h;
    const TextureImage t = solid(w, h, {10, 20, 30, 255});
    EXPECT_EQ(build_mip_chain(t).size(), 4 * chain) << w << "x" << h;
  }
}

TEST(MipChain, BoxFilterAveragesInLinearLight) {
  TextureImage t = solid(2, 2, {0, 0, 0, 255});
  t.rgba[0] = t.rgba[1] = t.rgba[2] = 255;  // one white texel, three black ones
  t.rgba[12] = t.rgba[13] = t.rgba[14] = 255;
  const TextureImage half = half_size(t);
  ASSERT_EQ(half.width, 1u);
  ASSERT_EQ(half.height, 1u);
  // Half the light: linear 0.5 is sRGB code 188, not the 128 of averaging the codes.
  EXPECT_EQ(half.rgba[0], linear_to_srgb8(0.5f));
  EXPECT_EQ(half.rgba[0], 188);
  EXPECT_EQ(half.rgba[3], 255);
}

TEST(MipChain, OddSidesFoldTheirLastRowIntoTheBox) {
  TextureImage t = solid(3, 1, {0, 0, 0, 255});
  t.rgba[8] = t.rgba[9] = t.rgba[10] = 255;  // the last (odd) column is white
  const TextureImage half = half_size(t);
  ASSERT_EQ(half.width, 1u);
  EXPECT_EQ(half.rgba[0], linear_to_srgb8(1.0f / 3.0f));
}

TEST(MipChain, CutOutColoursIgnoreTransparentTexels) {
  TextureImage t = solid(2, 2, {255, 0, 0, 0});  // transparent red
  t.has_alpha_mask = true;
  t.rgba[4] = 0, t.rgba[5] = 200, t.rgba[7] = 255;  // one opaque green texel
  const TextureImage half = half_size(t);
  EXPECT_EQ(half.rgba[0], 0);
  EXPECT_EQ(half.rgba[1], 200);
  EXPECT_EQ(half.rgba[3], 64);
}

TEST(MipChain, CutOutCoverageIsKeptOnEveryLevel) {
  // Foliage-like noise: 30 % of the texels opaque. A plain box filter drops the alpha of every
  // coarse texel to about 0.3, below the 0.5 cut-out test, so distant leaves would vanish.
  TextureImage t = solid(256, 256, {40, 120, 30, 0});
  t.has_alpha_mask = true;
  std::mt19937 rng(5);
  for (size_t i = 0; i < 256 * 256; ++i) t.rgba[4 * i + 3] = rng() % 10 < 3 ? 255 : 0;
  const double c0 = alpha_coverage(t.rgba.data(), 256 * 256);
  const std::vector<uint8_t> chain = build_mip_chain(t);
  size_t offset = 256 * 256;
  for (uint32_t k = 1; k < 7; ++k) {
    const uint32_t side = 256u >> k;
    const double ck = alpha_coverage(chain.data() + 4 * offset, size_t(side) * side);
    EXPECT_NEAR(ck, c0, 0.06) << "level " << k;
    offset += size_t(side) * side;
  }
  TextureImage box = half_size(half_size(t));
  EXPECT_LT(alpha_coverage(box.rgba.data(), 64 * 64), 0.5 * c0) << "the unscaled box filter loses the leaves";
}

// The kernels' view of one texture: a 4x4 level 0 of one colour, level 1 (2x2) of another.
struct TwoLevelTexture {
  std::vector<uint32_t> texels;
  TextureGpu tex{0, 4, 4, 0, 3, 0, 0, 0};
  std::vector<float> to_linear, thresholds;
  ColorTables ct{};
  TwoLevelTexture() {
    texels.assign(16, 0xFF0000FFu);               // level 0: red
    texels.insert(texels.end(), 4, 0xFF00FF00u);  // level 1: green
    texels.push_back(0xFFFF0000u);                // level 2: blue
    for (int i = 0; i < 256; ++i) to_linear.push_back(srgb8_to_linear(uint8_t(i)));
    ct.srgb_to_linear = to_linear.data();
  }
  float4 at(float lod) { return texture_sample(&ct, texels.data(), &tex, 0.3f, 0.6f, lod); }
};

TEST(TextureFilter, TrilinearBlendsTheTwoLevelsAroundTheLod) {
  TwoLevelTexture t;
  EXPECT_FLOAT_EQ(t.at(0.0f).x, 1.0f);
  EXPECT_FLOAT_EQ(t.at(1.0f).y, 1.0f);
  EXPECT_FLOAT_EQ(t.at(1.0f).x, 0.0f);
  EXPECT_NEAR(t.at(0.25f).x, 0.75f, 1e-6);
  EXPECT_NEAR(t.at(0.25f).y, 0.25f, 1e-6);
  EXPECT_FLOAT_EQ(t.at(7.0f).z, 1.0f) << "levels beyond the last clamp to it";
  EXPECT_FLOAT_EQ(t.at(-3.0f).x, 1.0f);
}

TEST(TextureFilter, LodIsLog2OfTheTexelsAcrossTheFootprint) {
  TextureGpu tex{0, 1024, 1024, 0, 11, 0, 0, 0};
  // uv area equals world area: 1024 texels per unit of length.
  EXPECT_FLOAT_EQ(texture_lod(&tex, 1.0f, 1.0f / 1024.0f), 0.0f);
  EXPECT_NEAR(texture_lod(&tex, 1.0f, 4.0f / 1024.0f), 2.0f, 1e-5);
  EXPECT_NEAR(texture_lod(&tex, 0.25f, 4.0f / 1024.0f), 1.0f, 1e-5) << "half the uv per length: one level finer";
  EXPECT_FLOAT_EQ(texture_lod(&tex, 1.0f, 0.1f / 1024.0f), 0.0f) << "magnification stays on level 0";
}

TEST(RayCone, WidthGrowsWithDistanceAndCurvatureSpreadsReflections) {
  CameraParams cam{};
  cam.top = 0.5f, cam.bottom = -0.5f, cam.height = 100;
  const RayCone primary = ray_cone_primary(&cam, 1);
  EXPECT_FLOAT_EQ(primary.spread, 0.01f);
  EXPECT_FLOAT_EQ(ray_cone_width_at(primary, 30.0f), 0.3f);
  EXPECT_FLOAT_EQ(ray_cone_primary(&cam, 0).spread, 0.0f) << "filtering off";
  const RayCone flat = ray_cone_reflect(primary, 30.0f, 0.0f);
  EXPECT_FLOAT_EQ(flat.width, 0.3f);
  EXPECT_FLOAT_EQ(flat.spread, 0.01f) << "a plane mirror keeps the spread";
  EXPECT_FLOAT_EQ(ray_cone_reflect(primary, 30.0f, 2.0f).spread, 0.01f + 2.0f * 2.0f * 0.3f) << "convex: wider";
  EXPECT_LT(ray_cone_reflect(primary, 30.0f, -2.0f).spread, 0.0f) << "concave: converging";
  EXPECT_LT(ray_cone_refract(primary, 30.0f, 2.0f, 1.0f / 1.5f).spread, primary.spread) << "entering a convex lens";
}

TEST(TextureFilter, LongAxisOfTheFootprintMapsIntoTextureSpace) {
  // u runs along x at 1/2 per unit, v along z at 1/4 per unit.
  const float3 p0 = make_float3(0, 0, 0), p1 = make_float3(2, 0, 0), p2 = make_float3(0, 0, 4);
  const float2 a = make_float2(0, 0), b = make_float2(1, 0), c = make_float2(0, 1);
  const float2 along_x = surface_uv_along(p0, p1, p2, a, b, c, make_float3(3, 0, 0));
  EXPECT_NEAR(along_x.x, 0.5f, 1e-6);
  EXPECT_NEAR(along_x.y, 0.0f, 1e-6);
  const float2 along_z = surface_uv_along(p0, p1, p2, a, b, c, make_float3(0, 0, -0.1f));
  EXPECT_NEAR(along_z.x, 0.0f, 1e-6);
  EXPECT_NEAR(along_z.y, -0.25f, 1e-6);
  const float2 diagonal = surface_uv_along(p0, p1, p2, a, b, c, make_float3(1, 0, 1));
  EXPECT_NEAR(diagonal.x, 0.5f / std::sqrt(2.0f), 1e-6);
  EXPECT_NEAR(diagonal.y, 0.25f / std::sqrt(2.0f), 1e-6);
  const float2 head_on = surface_uv_along(p0, p1, p2, a, b, c, make_float3(0, 0, 0));
  EXPECT_EQ(head_on.x, 0.0f);
  EXPECT_EQ(head_on.y, 0.0f);
}

TEST(RayCone, CurvatureOfASphereTriangleIsOneOverTheRadius) {
  // Three points of a sphere of radius 2 with their radial normals.
  const float r = 2.0f;
  std::vector<float> positions, normals;
  for (auto [th, ph] : {std::pair{0.3f, 0.2f}, {0.35f, 0.25f}, {0.28f, 0.3f}}) {
    const float n[3] = {std::sin(th) * std::cos(ph), std::sin(th) * std::sin(ph), std::cos(th)};
    for (float c : n) positions.push_back(r * c), normals.push_back(c);
  }
  const uint32_t tri[3] = {0, 1, 2};
  SceneView view{};
  view.flags = TS_SCENE_HAS_NORMALS;
  view.positions = positions.data();
  view.normals = normals.data();
  view.triangles = tri;
  view.triangle_count = 1;
  Surface s{};
  s.front = 1;
  EXPECT_NEAR(surface_curvature(&view, &s, 0), 1.0f / r, 1e-3);
  s.front = 0;
  EXPECT_NEAR(surface_curvature(&view, &s, 0), -1.0f / r, 1e-3) << "seen from inside: concave";
}

// A 40 x 40 floor quad under a checker of 1-texel squares, its texture repeated 16 times.
// linear_positions false: the positions' decode of files before format version 6 (a version 2 file's).
std::filesystem::path write_checker_floor(const std::filesystem::path& dir, bool linear_positions = true) {
  ImageRgba8 checker(128, 128);
  for (int y = 0; y < 128; ++y)
    for (int x = 0; x < 128; ++x) {
      const uint8_t v = (x + y) % 2 ? 235 : 20;
      checker.set(x, y, {v, v, v, 255});
    }
  write_png(dir / "checker.png", checker);
  testing::write_text(dir / "floor.mtl", "newmtl floor\nKd 1 1 1\nmap_Kd checker.png\n");
  testing::write_text(dir / "floor.obj",
                      "mtllib floor.mtl\nv -20 0 -20\nv 20 0 -20\nv 20 0 20\nv -20 0 20\n"
                      "vt 0 0\nvt 16 0\nvt 16 16\nvt 0 16\nvn 0 1 0\nusemtl floor\nf 1/1/1 3/3/1 2/2/1\nf 1/1/1 4/4/1 3/3/1\n");
  testing::write_text(dir / "floor.scene.txtpb",
                      "camera { position { x: 0 y: 1.2 z: 19 } qw: 0.9961947 qx: -0.0871557 qy: 0 qz: 0 "
                      "vertical_fov_degrees: 50 }\ndirectional_lights { direction { x: 0 y: -1 z: 0 } radiance { x: 3 y: 3 z: 3 } }\n");
  pack::PackOptions o;
  o.input = dir / "floor.obj";
  o.output = dir / "floor.tpk";
  o.settings = dir / "floor.scene.txtpb";
  o.show_progress = false;
  o.zstd_level = 1;
  o.quantize.linear_positions = linear_positions;
  pack::pack_scene(o);
  return o.output;
}

TEST(TextureFilter, PackerStoresFullChains) {
  TempDir dir("texfilter_pack");
  const PackedScene scene = PackedScene::load(write_checker_floor(dir.path()));
  ASSERT_EQ(scene.manifest().textures_size(), 1);
  const auto& t = scene.manifest().textures(0);
  EXPECT_EQ(t.mip_levels(), 8u);
  EXPECT_EQ(scene.section(tpk::TEXELS).size(), 4 * mip_chain_texels(128, 128, 8));
  EXPECT_LE(double(scene.section(tpk::TEXELS).size()), 1.34 * 4 * 128 * 128);
  // Level 7 (1 x 1) is the mean of the checker in linear light.
  const auto texels = scene.section_as<uint32_t>(tpk::TEXELS);
  const float mean = 0.5f * (srgb8_to_linear(20) + srgb8_to_linear(235));
  EXPECT_EQ(texels.back() & 255u, linear_to_srgb8(mean));
}

TEST(TextureFilter, RayConesApproachTheSupersampledReference) {
  TempDir dir("texfilter_render");
  const PackedScene scene = PackedScene::load(write_checker_floor(dir.path()));
  CameraSpec spec;
  spec.pose = pose_from_manifest(scene.manifest().camera());
  spec.vertical_fov_degrees = 50;
  const CameraParams camera = make_camera(spec, 96, 64);
  auto host = make_tile_renderer(scene, {"host", std::nullopt, 0});
  RenderSettings filtered = default_render_settings(scene), plain = filtered;
  plain.texture_lod = 0;
  auto render = [&](const RenderSettings& s, uint32_t samples) {
    return render_aa_frame({camera}, samples, [&](const CameraParams& c) { return render_frame(*host, c, s, 64); });
  };
  const ImageRgba8 reference = render(plain, 64);
  const ImageRgba8 one_plain = render(plain, 1), one_filtered = render(filtered, 1);
  const double psnr_plain = psnr_rgb(one_plain, reference), psnr_filtered = psnr_rgb(one_filtered, reference);
  EXPECT_GT(psnr_filtered, psnr_plain + 3.0) << "plain " << psnr_plain << " dB, filtered " << psnr_filtered << " dB";
  EXPECT_GT(ssim_luma(one_filtered, reference), ssim_luma(one_plain, reference));
}

// A version 2 file (textures without mip levels) still loads and renders from level 0.
TEST(TextureFilter, Version2FilesLoadWithLevelZeroAlone) {
  TempDir dir("texfilter_v2");
  const auto path = write_checker_floor(dir.path(), /*linear_positions=*/false);
  TpkContents contents = read_tpk(path);
  tpk::Manifest m = contents.manifest;
  m.mutable_textures(0)->clear_mip_levels();
  m.clear_compact_kdtree();  // version 4's second tree has no place in a version 2 file
  std::vector<TpkSectionData> sections;
  for (const auto& s : contents.sections)
    if (s.kind != tpk::KD_NODES_COMPACT && s.kind != tpk::KD_LEAF_REFS_COMPACT) sections.push_back(s);
  for (auto& s : sections)
    if (s.kind == tpk::TEXELS) s.raw.resize(4 * 128 * 128);
  write_tpk(dir / "v3.tpk", m, sections, 1);  // fills m's section table
  // Turn the header and manifest into version 2's.
  m.set_format_version(2);
  const std::string manifest = m.SerializeAsString();
  std::vector<uint8_t> file = read_file_bytes(dir / "v3.tpk");
  uint32_t old_size = 0;
  std::memcpy(&old_size, file.data() + 12, 4);
  std::vector<uint8_t> v2(file.begin(), file.begin() + kTpkHeaderSize);
  v2[8] = 2;
  const uint32_t size = uint32_t(manifest.size());
  std::memcpy(v2.data() + 12, &size, 4);
  const uint64_t h = hash64(manifest.data(), manifest.size());
  std::memcpy(v2.data() + 16, &h, 8);
  v2.insert(v2.end(), manifest.begin(), manifest.end());
  v2.insert(v2.end(), file.begin() + kTpkHeaderSize + old_size, file.end());
  const PackedScene scene = PackedScene::from_contents(parse_tpk(v2, "v2.tpk"), "v2.tpk");
  EXPECT_EQ(texture_levels(scene.manifest().textures(0)), 1u);
  EXPECT_EQ(ShadingData::build(scene).textures[0].levels, 1u);
  // A version 3 file must say how many levels it holds.
  EXPECT_THROW(PackedScene::load(dir / "v3.tpk"), Error);
}

}  // namespace
}  // namespace tessera
