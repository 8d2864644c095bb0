// Scene composition in the settings file (scene-packer/compose.h): included meshes with a
// transform, generated spheres, boxes and quads with their own materials; the five shipped
// path-tracer scenes pack; bad entries are clear errors; packing stays deterministic.
#include <gtest/gtest.h>

#include <cmath>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/scene/packed_scene.h"
#include "scene-packer/compose.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"

namespace tessera {
namespace {

using testing::TempDir;

pack::PackReport pack_settings(const std::filesystem::path& settings, const std::filesystem::path& out) {
  pack::PackOptions o;
  o.input = settings;
  o.output = out;
  o.include_dirs = {testing::shared_dir() / "scenes"};
  o.show_progress = false;
  o.zstd_level = 1;
  return pack::pack_scene(o);
}

TEST(SceneCompose, IcosphereIsUnitAndClosed) {
  for (uint32_t level : {0u, 2u}) {
    const TriangleMesh s = pack::make_icosphere(level);
    EXPECT_EQ(s.triangle_count(), 20u << (2 * level));
    EXPECT_EQ(s.vertex_count(), s.triangle_count() / 2 + 2);  // Euler: V - E + F = 2 on a closed surface
    for (size_t v = 0; v < s.vertex_count(); ++v) {
      const auto p = s.position(uint32_t(v));
      EXPECT_NEAR(std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]), 1.0f, 1e-5f);
    }
  }
}

TEST(SceneCompose, ShapesIncludesAndMaterials) {
  TempDir dir("compose");
  testing::write_text(dir / "s.scene.txtpb",
                      "add_materials { name: \"floor\" diffuse { x: 0.5 y: 0.5 z: 0.5 } }\n"
                      "add_materials { name: \"lamp\" type: EMISSIVE emission { x: 5 y: 5 z: 5 } }\n"
                      "add_materials { name: \"chrome\" type: MIRROR }\n"
                      "quad { a { x: -1 y: 0 z: -1 } b { x: 1 y: 0 z: -1 } c { x: 1 y: 0 z: 1 } d { x: -1 y: 0 z: 1 } material: \"floor\" }\n"
                      "box { min { x: -0.2 y: 0 z: -0.2 } max { x: 0.2 y: 0.4 z: 0.2 } material: \"lamp\" }\n"
                      "sphere { center { x: 0 y: 2 z: 0 } radius: 0.5 subdivisions: 1 material: \"chrome\" }\n"
                      "include { path: \"teapot/teapot_lowpoly.obj\" material: \"floor\" fit_size: 2 rotate_y_degrees: 90\n"
                      "          translate { x: 5 y: 1 z: 0 } }\n");
  const auto report = pack_settings(dir / "s.scene.txtpb", dir / "s.tpk");
  EXPECT_EQ(report.manifest.triangles(), 2u + 12u + 80u + 552u);
  const PackedScene scene = PackedScene::load(dir / "s.tpk");
  const auto& m = scene.manifest();
  ASSERT_EQ(m.materials_size(), 3);
  EXPECT_EQ(m.materials(1).type(), tpk::EMISSIVE);
  EXPECT_EQ(m.materials(2).type(), tpk::MIRROR);
  // fit_size 2 puts the teapot's bottom centre at the translation and its largest extent at 2.
  EXPECT_NEAR(m.bounds().max().x(), 5.0f + 0.5f * 2.0f * (1.0f / 1.6074f), 0.02f);  // rotated: z extent along x
  EXPECT_NEAR(m.bounds().min().y(), 0.0f, 1e-3f);
  EXPECT_NEAR(m.bounds().max().y(), 2.5f, 1e-3f);  // the sphere's top
}

TEST(SceneCompose, BadEntriesAreClearErrors) {
  TempDir dir("compose_bad");
  auto expect_error = [&](const std::string& text, const std::string& needle) {
    testing::write_text(dir / "bad.scene.txtpb", text);
    try {
      pack_settings(dir / "bad.scene.txtpb", dir / "bad.tpk");
      ADD_FAILURE() << "no error for: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(dir / "bad.tpk"));
  };
  expect_error("sphere { radius: 1 material: \"nope\" }", "no material named 'nope'");
  expect_error("add_materials { name: \"a\" } sphere { radius: -1 material: \"a\" }", "radius");
  expect_error("add_materials { name: \"a\" } box { min { x: 1 } max { x: 0 } material: \"a\" }", "min must be below max");
  expect_error("add_materials { name: \"a\" } include { path: \"missing/none.obj\" material: \"a\" }", "not found");
  expect_error("add_materials { name: \"a\" } add_materials { name: \"a\" }", "already exists");
  expect_error("add_materials { name: \"a\" } quad { material: \"a\" }", "degenerate");
  expect_error("add_materials { name: \"a\" }", "no triangles");
}

TEST(SceneCompose, ShippedPathTracerScenesPackDeterministically) {
  TempDir dir("compose_shipped");
  for (const char* name : {"teapot", "ant", "bunny", "suzanne", "torus_knot"}) {
    const auto settings = testing::source_dir() / "scene-packer/scenes" / (std::string("pt_") + name + ".scene.txtpb");
    const auto report = pack_settings(settings, dir / "a.tpk");
    const auto& m = report.manifest;
    EXPECT_GT(m.triangles(), 2600u) << name;  // box, table, cube, two 1,280-triangle spheres and the model
    EXPECT_FLOAT_EQ(m.scene_scale(), 1000.0f) << name;
    int mirrors = 0, glass = 0, lights = 0;
    for (const auto& mat : m.materials()) {
      mirrors += mat.type() == tpk::MIRROR;
      glass += mat.type() == tpk::GLASS;
      lights += mat.type() == tpk::EMISSIVE;
    }
    EXPECT_EQ(mirrors + glass + lights, 3) << name;
    if (std::string(name) == "teapot") {
      pack_settings(settings, dir / "b.tpk");
      EXPECT_EQ(read_file_bytes(dir / "a.tpk"), read_file_bytes(dir / "b.tpk"));
    }
  }
}

}  // namespace
}  // namespace tessera
