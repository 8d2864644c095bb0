// tessera-pack's inputs at their limits: PLY headers that promise endless records, compressed OBJ
// files that claim gigabytes, huge polygons, file names that are not UTF-8, missing material
// libraries and nonsense settings. Each is one clear error (or, for the name, a file that reads back).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/base/error.h"
#include "error_text.h"
#include "common/base/file_io.h"
#include "common/base/memory_usage.h"
#include "common/base/utf8.h"
#include "common/scene/mesh_loader.h"
#include "common/scene/packed_scene.h"
#include "common/scene/ply_reader.h"
#include "common/scene/scene_settings.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"

namespace tessera {
namespace {

using testing::TempDir;

using testing::error_of;

std::vector<uint8_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

TEST(MeshInput, PlyElementWithoutPropertiesIsAnError) {
  const std::string vertex_only = "ply\nformat ascii 1.0\nelement vertex 20000000\nelement face 0\nend_header\n";
  const std::string message = error_of([&] { parse_ply(bytes_of(vertex_only), "v.ply"); });
  ASSERT_NE(message.find("element 'vertex' has no properties"), std::string::npos) << message;
  // An element the reader skips, counted far beyond anything a loop could get through.
  const std::string endless = "ply\nformat binary_little_endian 1.0\nelement junk 1099511627776\nend_header\n";
  EXPECT_NE(error_of([&] { parse_ply(bytes_of(endless), "j.ply"); }).find("no properties"), std::string::npos);
  const std::string too_many =
      "ply\nformat binary_little_endian 1.0\nelement vertex 1099511627776\nproperty float x\nend_header\n1234";
  EXPECT_NE(error_of([&] { parse_ply(bytes_of(too_many), "m.ply"); }).find("more than the file holds"), std::string::npos);
}

TEST(MeshInput, PlyListLengthsAndIndicesMustBeWholeNumbersInRange) {
  const std::string head = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
                           "element face 1\nproperty list float float vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n";
  for (const char* face : {"nan 0 1 2\n", "3.5 0 1 2\n", "3 0 1 nan\n", "3 0 1 -1\n", "3 0 1 2.5\n", "3 0 1 3\n"})
    EXPECT_NE(error_of([&] { parse_ply(bytes_of(head + face), "f.ply"); }), "") << face;
  EXPECT_EQ(error_of([&] { parse_ply(bytes_of(head + "3 0 1 2\n"), "f.ply"); }), "");
}

// A zstd frame that declares `declared` bytes but holds only a few.
std::vector<uint8_t> lying_zstd_frame(uint64_t declared) {
  // Magic; 8-byte content size, not single-segment; a 128 KiB window.
  std::vector<uint8_t> f = {0x28, 0xB5, 0x2F, 0xFD, 0xC0, 0x38};
  for (int i = 0; i < 8; ++i) f.push_back(uint8_t(declared >> (8 * i)));
  const std::string text = "v 0 0 0\n";
  const uint32_t header = uint32_t(text.size()) << 3 | 1u;  // last raw block
  f.insert(f.end(), {uint8_t(header), uint8_t(header >> 8), uint8_t(header >> 16)});
  f.insert(f.end(), text.begin(), text.end());
  return f;
}

TEST(MeshInput, CompressedObjClaimingGigabytesIsRefusedWithoutAllocatingThem) {
  TempDir dir("mesh_zst");
  for (uint64_t declared : {uint64_t(1536) << 20, uint64_t(3) << 30, uint64_t(1) << 34}) {
    const auto frame = lying_zstd_frame(declared);
    write_file_atomically(dir / "big.obj.zst", frame.data(), frame.size());
    const uint64_t peak_before = peak_resident_bytes();
    EXPECT_NE(error_of([&] { load_mesh(dir / "big.obj.zst"); }), "") << declared;
    EXPECT_LT(peak_resident_bytes() - peak_before, 256ull << 20) << declared;
  }
}

std::string polygon_obj(int corners) {
  std::string text;
  for (int i = 0; i < corners; ++i) {
    const double a = 2 * M_PI * i / corners;
    text += "v " + std::to_string(std::cos(a)) + " " + std::to_string(std::sin(a)) + " 0\n";
  }
  text += "f";
  for (int i = 1; i <= corners; ++i) text += " " + std::to_string(i);
  return text + "\n";
}

TEST(MeshInput, PolygonsAreBoundedSoTriangulationStaysFast) {
  const auto start = std::chrono::steady_clock::now();
  const std::string message = error_of([&] { parse_obj(polygon_obj(8001), "big.obj", "."); });
  EXPECT_NE(message.find("more than " + std::to_string(kMaxPolygonVertices) + " vertices"), std::string::npos) << message;
  const TriangleMesh at_limit = parse_obj(polygon_obj(int(kMaxPolygonVertices)), "limit.obj", ".");
  EXPECT_EQ(at_limit.triangle_count(), kMaxPolygonVertices - 2);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  const std::string ply = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
                          "element face 1\nproperty list ushort int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n" +
                          std::to_string(kMaxPolygonVertices + 1) + std::string(" 0 1 2\n");
  EXPECT_NE(error_of([&] { parse_ply(bytes_of(ply), "p.ply"); }).find("vertices"), std::string::npos);
}

TEST(MeshInput, MissingMaterialLibraryIsAnError) {
  TempDir dir("mesh_mtl");
  testing::write_text(dir / "m.obj", "mtllib nowhere.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl red\nf 1 2 3\n");
  const std::string message = error_of([&] { load_mesh(dir / "m.obj"); });
  EXPECT_NE(message.find("nowhere.mtl"), std::string::npos) << message;
  const auto r = testing::run_command((testing::binary_dir() / "tessera-pack").string() + " " + (dir / "m.obj").string() +
                                      " -o " + (dir / "m.tpk").string());
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "m.tpk"));
}

// Exporters on Windows write map_Kd as a path of their machine: the file of that name beside the MTL
// is taken. A texture found nowhere names the material and the MTL statement.
TEST(MeshInput, TexturePathsOfAnotherMachineAreFoundBesideTheMtl) {
  TempDir dir("mesh_texture_path");
  std::filesystem::copy_file(testing::source_dir() / "tests/data/gltf/checker.png", dir / "tex.png");
  const std::string obj = "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\nusemtl wall\nf 1/1 2/2 3/3\n";
  testing::write_text(dir / "m.obj", obj);
  testing::write_text(dir / "m.mtl", "newmtl wall\nKd 1 1 1\nmap_Kd C:\\Users\\artist\\textures\\tex.png\n");
  const TriangleMesh mesh = load_mesh(dir / "m.obj");
  ASSERT_EQ(mesh.textures.size(), 1u);
  EXPECT_EQ(mesh.materials.at(0).texture(), 0);
  testing::write_text(dir / "m.mtl", "newmtl wall\nKd 1 1 1\nmap_Kd textures/gone.png\n");
  const std::string message = error_of([&] { load_mesh(dir / "m.obj"); });
  EXPECT_NE(message.find("m.obj: material 'wall': map_Kd 'textures/gone.png' not found"), std::string::npos) << message;
  MeshLoadOptions no_textures;
  no_textures.load_textures = false;
  EXPECT_EQ(load_mesh(dir / "m.obj", no_textures).triangle_count(), 1u);
}

// What an OBJ holds that the scene will not show is said, not dropped in silence.
TEST(MeshInput, LinesPointsAndUndefinedMaterialsAreWarnings) {
  TempDir dir("mesh_obj_warnings");
  testing::write_text(dir / "m.mtl", "newmtl wall\nKd 1 1 1\n");
  testing::write_text(dir / "m.obj", "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl walll\nf 1 2 3\nl 1 2\np 3\nusemtl walll\nf 1 3 2\n");
  const TriangleMesh mesh = load_mesh(dir / "m.obj");
  EXPECT_EQ(mesh.triangle_count(), 2u);
  // said once, however often the file names the missing material
  EXPECT_EQ(std::count_if(mesh.warnings.begin(), mesh.warnings.end(), [](const std::string& w) { return w.find("walll") != std::string::npos; }), 1);
  const auto said = [&](const std::string& part) {
    return std::any_of(mesh.warnings.begin(), mesh.warnings.end(), [&](const std::string& w) { return w.find(part) != std::string::npos; });
  };
  EXPECT_TRUE(said("walll")) << ::testing::PrintToString(mesh.warnings);
  EXPECT_TRUE(said("1 line and 1 point elements are not drawn")) << ::testing::PrintToString(mesh.warnings);
}

TEST(MeshInput, FileNameThatIsNotUtf8PacksAndReadsBack) {
  TempDir dir("mesh_name");
  const std::filesystem::path input = dir / "caf\xE9 \xFF.obj";
  std::filesystem::copy_file(testing::scene_path("cornell_box/cornell_box.obj"), input);
  std::filesystem::copy_file(testing::scene_path("cornell_box/cornell_box.mtl"), dir / "cornell_box.mtl");
  pack::PackOptions o;
  o.input = input;
  o.output = dir / "out.tpk";
  o.show_progress = false;
  pack::pack_scene(o);
  const PackedScene scene = PackedScene::load(dir / "out.tpk");
  EXPECT_EQ(scene.manifest().source(), "caf\xEF\xBF\xBD \xEF\xBF\xBD.obj");
}

TEST(Utf8, ValidatesAndRepairs) {
  EXPECT_TRUE(is_valid_utf8("plain"));
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9 \xF0\x9F\x98\x80"));
  for (const char* bad : {"\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xC3", "\xFF"})
    EXPECT_FALSE(is_valid_utf8(bad)) << bad;
  EXPECT_EQ(valid_utf8("a\xC3"), "a\xEF\xBF\xBD");
  EXPECT_EQ(valid_utf8("\xE2\x82\xAC\xE2\x82"), "\xE2\x82\xAC\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(SceneSettings, NonsenseScalesAreErrors) {
  TempDir dir("settings_scale");
  for (const char* line : {"scene_scale: nan", "scene_scale: -5", "scene_scale: 0", "scene_scale: inf", "scale: nan"}) {
    testing::write_text(dir / "s.scene.txtpb", std::string(line) + "\n");
    EXPECT_NE(error_of([&] { read_scene_settings(dir / "s.scene.txtpb"); }), "") << line;
  }
  testing::write_text(dir / "s.scene.txtpb", "scene_scale: 1000\n");
  EXPECT_EQ(read_scene_settings(dir / "s.scene.txtpb").scene_scale(), 1000.0f);
}

TEST(TesseraRender, FovThatIsNotAnAngleIsAnError) {
  for (const char* fov : {"nan", "-10", "180", "inf"}) {
    const auto r = testing::run_command((testing::binary_dir() / "worker/tessera-render").string() +
                                        " /nonexistent.tpk --fov " + fov + " -o /tmp/tessera-never-written.png");
    EXPECT_NE(r.exit_code, 0) << fov;
    EXPECT_NE(r.output.find("--fov"), std::string::npos) << fov << ": " << r.output;
  }
}

// Found by the obj fuzzer: a face whose texture coordinate index lies beyond the `vt` lines read
// past the reader's array. Every index is checked where it is used.
TEST(MeshInput, FaceIndicesBeyondTheReadAttributesAreAnError) {
  const std::string seed = read_file_text(std::filesystem::path(TESSERA_SOURCE_DIR) / "fuzz/corpus/obj/texcoord_index_out_of_range.obj");
  const std::string message = error_of([&] { parse_obj(seed, "crafted.obj", "."); });
  EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
}

}  // namespace
}  // namespace tessera
