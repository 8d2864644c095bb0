// tessera-pack's instanced scenes (docs/instances.md): a glTF's meshes packed once as objects and its
// nodes as instances, OBJ groups as objects, version 5 sections that load back, static single objects
// packed as before, and bad input refused with one error and no file.
#include <gtest/gtest.h>

#include <cmath>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/scene/tpk_file.h"
#include "instanced_pack_support.h"
#include "test_helpers.h"

namespace tessera::testing {
namespace {

// Three cube meshes placed by five nodes: mesh 0 three times (one of them under a parent), the others once.
std::filesystem::path write_cubes(const std::filesystem::path& dir, const std::string& name) {
  AnimatedGltf gltf;
  const int small = add_cube_mesh(gltf, 1.0f), large = add_cube_mesh(gltf, 2.0f), flat = add_cube_mesh(gltf, 0.5f);
  gltf.node({{"mesh", small}, {"translation", {-3.0, 0.0, 0.0}}});
  gltf.node({{"mesh", small}, {"translation", {0.0, 0.0, 0.0}}, {"rotation", {0.0, 0.38268343, 0.0, 0.92387953}}});
  const int parent = gltf.node({{"translation", {0.0, 2.0, 0.0}}, {"scale", {1.5, 1.5, 1.5}}, {"children", {3}}});
  gltf.node({{"mesh", small}, {"translation", {1.0, 0.0, 0.0}}});
  gltf.node({{"mesh", large}, {"translation", {4.0, 0.0, 1.0}}});
  gltf.node({{"mesh", flat}, {"translation", {0.0, -2.0, 0.0}}, {"scale", {2.0, 1.0, 3.0}}});
  (void)parent;
  add_default_scene(gltf);
  return gltf.write(dir / name);
}

// Corners of a hit triangle match within a hair (a transformed vertex and a packed one round apart).
bool near(const TracedHit& a, const TracedHit& b, float tolerance) {
  if (a.found != b.found) return false;
  if (!a.found) return true;
  return std::fabs(a.t - b.t) <= tolerance * std::max(1.0f, a.t);
}

TEST(InstancedPack, MeshesAreObjectsStoredOnceAndNodesInstances) {
  TempDir dir("instanced_pack");
  const auto input = write_cubes(dir.path(), "cubes.gltf");
  const auto report = pack::pack_scene(instanced_pack_options(input, dir / "cubes.tpk"));
  EXPECT_EQ(report.manifest.objects(), 3u);
  EXPECT_EQ(report.manifest.instances(), 5u);
  EXPECT_EQ(report.manifest.triangles(), 36u);  // three cubes, not five
  const PackedScene scene = PackedScene::load(dir / "cubes.tpk");
  EXPECT_EQ(scene.manifest().format_version(), 6u);  // objects (5) with linearly decoded positions (6)
  ASSERT_TRUE(scene.instanced());
  ASSERT_EQ(scene.objects().size(), 3u);
  EXPECT_EQ(scene.object_first_triangles(), (std::vector<uint32_t>{0, 12, 24}));
  ASSERT_EQ(scene.instance_sources().size(), 5u);
  EXPECT_EQ(scene.instance_sources()[2].node, 3u);  // the child of node 2, in visiting order
  EXPECT_EQ(scene.instance_sources()[2].object, 0u);
  EXPECT_EQ(scene.instance_sources()[3].object, 1u);
  EXPECT_NEAR(scene.objects()[1].bounds.max[0], 1.0f, 1e-3f);  // object space: the large cube
  auto motion = SceneMotion::of_scene(scene, "cubes.tpk");
  ASSERT_TRUE(motion.has_value());
  // The child's world: parent (y 2, scale 1.5) then its own x 1.
  const Transform3x4& child = motion->instances()[2].world;
  EXPECT_FLOAT_EQ(child.m[3], 1.5f);
  EXPECT_FLOAT_EQ(child.m[7], 2.0f);
  EXPECT_FLOAT_EQ(child.m[0], 1.5f);
  EXPECT_NEAR(scene.manifest().world_bounds().max().x(), 5.0f, 1e-3f);
}

TEST(InstancedPack, InstancesTraceLikeTheFlattenedPack) {
  TempDir dir("instanced_vs_flat");
  const auto input = write_cubes(dir.path(), "cubes.gltf");
  pack::pack_scene(instanced_pack_options(input, dir / "instanced.tpk"));
  auto flat_options = instanced_pack_options(input, dir / "flat.tpk");
  flat_options.instances = false;
  pack::pack_scene(flat_options);
  const PackedScene instanced = PackedScene::load(dir / "instanced.tpk"), flat = PackedScene::load(dir / "flat.tpk");
  EXPECT_FALSE(flat.instanced());
  EXPECT_EQ(flat.manifest().format_version(), 6u);  // no objects, but linearly decoded positions
  EXPECT_EQ(flat.triangle_count(), 5u * 12u);
  auto motion = SceneMotion::of_scene(instanced, "instanced.tpk");
  const auto rays = rays_around(world_bounds(flat), 3000);
  const auto a = trace_flat(flat, rays);
  const auto b = trace_instanced(instanced, *motion, rays);
  int hits = 0, agree = 0;
  for (size_t i = 0; i < rays.size(); ++i) {
    hits += a[i].found;
    agree += near(a[i], b[i], 1e-3f);
  }
  EXPECT_GT(hits, 1000);
  // Quantized corners of a cube packed in place and of one placed by a transform differ by rounding:
  // a ray grazing an edge may hit or miss either way.
  EXPECT_GE(agree, int(rays.size()) - 15) << hits << " hits";
}

// OBJ groups as objects under identity instances: the very hits of the flattened pack, bit for bit.
TEST(InstancedPack, ObjGroupsUnderIdentityInstancesTraceTheFlattenedHitsExactly) {
  TempDir dir("obj_groups");
  std::string obj;
  int base = 1;
  for (int g = 0; g < 3; ++g) {
    obj += "g part" + std::to_string(g) + "\n";
    const float x = 2.5f * float(g), s = 0.5f + 0.4f * float(g);
    for (int c = 0; c < 8; ++c)
      obj += "v " + std::to_string(x + ((c & 1) ? s : -s)) + " " + std::to_string((c & 2) ? s : -s) + " " +
             std::to_string((c & 4) ? s * 1.3f : -s) + "\n";
    const int quads[6][4] = {{0, 1, 3, 2}, {4, 6, 7, 5}, {0, 4, 5, 1}, {2, 3, 7, 6}, {0, 2, 6, 4}, {1, 5, 7, 3}};
    for (const auto& q : quads)
      obj += "f " + std::to_string(base + q[0]) + " " + std::to_string(base + q[1]) + " " + std::to_string(base + q[2]) + " " +
             std::to_string(base + q[3]) + "\n";
    base += 8;
  }
  write_text(dir / "parts.obj", obj);
  auto options = instanced_pack_options(dir / "parts.obj", dir / "groups.tpk");
  options.instances = false;
  options.keep_obj_groups = true;
  pack::pack_scene(options);
  options.keep_obj_groups = false;
  options.output = dir / "flat.tpk";
  pack::pack_scene(options);
  const PackedScene groups = PackedScene::load(dir / "groups.tpk"), flat = PackedScene::load(dir / "flat.tpk");
  ASSERT_EQ(groups.objects().size(), 3u);
  auto motion = SceneMotion::of_scene(groups, "groups.tpk");
  for (const Instance& instance : motion->instances()) EXPECT_TRUE(instance.world.is_identity());
  const auto rays = rays_around(world_bounds(flat), 4000);
  const auto a = trace_flat(flat, rays), b = trace_instanced(groups, *motion, rays);
  int hits = 0;
  for (size_t i = 0; i < rays.size(); ++i) {
    ASSERT_EQ(a[i].found, b[i].found) << "ray " << i;
    if (!a[i].found) continue;
    ++hits;
    EXPECT_EQ(std::bit_cast<uint32_t>(a[i].t), std::bit_cast<uint32_t>(b[i].t)) << "ray " << i;
  }
  EXPECT_GT(hits, 1000);
}

TEST(InstancedPack, OneStaticObjectPacksExactlyAsWithoutInstances) {
  TempDir dir("single_object");
  AnimatedGltf gltf;
  gltf.node({{"mesh", add_cube_mesh(gltf, 1.0f)}, {"translation", {1.0, 2.0, 3.0}}});
  add_default_scene(gltf);
  const auto input = gltf.write(dir / "one.gltf");
  pack::pack_scene(instanced_pack_options(input, dir / "a.tpk"));
  auto options = instanced_pack_options(input, dir / "b.tpk");
  options.instances = false;
  pack::pack_scene(options);
  EXPECT_EQ(read_file_bytes(dir / "a.tpk"), read_file_bytes(dir / "b.tpk"));
  EXPECT_FALSE(PackedScene::load(dir / "a.tpk").instanced());
}

// ---- bad input: one error naming the problem, exit 1, no file ----

struct Refusal {
  int exit_code;
  std::string output;
  bool wrote;
};

Refusal pack_cli(const std::filesystem::path& input, const std::filesystem::path& output, const std::string& flags = "--instances") {
  const auto r = run_command((binary_dir() / "tessera-pack").string() + " " + shell_word(input) + " -o " + shell_word(output) + " " + flags);
  return {r.exit_code, r.output, std::filesystem::exists(output)};
}

void expect_refused(const Refusal& r, const std::string& words) {
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_FALSE(r.wrote);
  EXPECT_NE(r.output.find("tessera-pack: error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(words), std::string::npos) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

TEST(InstancedPack, ZeroScaleNodeIsOneError) {
  TempDir dir("pack_scale0");
  AnimatedGltf gltf;
  const int cube = add_cube_mesh(gltf, 1.0f);
  gltf.node({{"mesh", cube}});
  gltf.node({{"mesh", cube}, {"scale", {1.0, 0.0, 1.0}}});
  add_default_scene(gltf);
  expect_refused(pack_cli(gltf.write(dir / "s.gltf"), dir / "s.tpk"), "node 1: transform has scale 0");
}

TEST(InstancedPack, BadAnimationKeysAreOneError) {
  TempDir dir("pack_keys");
  for (const std::string which : {"nan", "order", "scale"}) {
    AnimatedGltf gltf;
    const int cube = add_cube_mesh(gltf, 1.0f);
    gltf.node({{"mesh", cube}});
    const int moving = gltf.node({{"mesh", cube}});
    const std::vector<float> times = which == "nan" ? std::vector<float>{0.0f, NAN} : which == "order" ? std::vector<float>{1.0f, 0.5f}
                                                                                                         : std::vector<float>{0.0f, 1.0f};
    const std::vector<float> values = which == "scale" ? std::vector<float>{1, 1, 1, 0, 1, 1} : std::vector<float>{0, 0, 0, 1, 0, 0};
    gltf.channel(0, moving, which == "scale" ? "scale" : "translation", "LINEAR", gltf.accessor(times, "SCALAR"),
                 gltf.accessor(values, "VEC3"));
    add_default_scene(gltf);
    const auto r = pack_cli(gltf.write(dir / (which + ".gltf")), dir / (which + ".tpk"));
    expect_refused(r, which == "nan" ? "non-finite" : which == "order" ? "not increasing" : "scales node 1 to 0");
  }
}

TEST(InstancedPack, TooManyInstancesAndTooDeepNestingAreOneError) {
  TempDir dir("pack_limits");
  {
    AnimatedGltf gltf;
    const int cube = add_cube_mesh(gltf, 1.0f);
    gltf.json["nodes"] = nlohmann::json::array();
    for (uint32_t i = 0; i <= kMaxInstances; ++i) gltf.json["nodes"].push_back({{"mesh", cube}, {"translation", {double(i % 256), double(i / 256), 0.0}}});
    add_default_scene(gltf);
    expect_refused(pack_cli(gltf.write(dir / "many.gltf"), dir / "many.tpk"), "more than 65536 instances");
  }
  {
    AnimatedGltf gltf;
    const int cube = add_cube_mesh(gltf, 1.0f);
    for (int depth = 0; depth < 33; ++depth)
      gltf.node(depth < 32 ? nlohmann::json{{"mesh", cube}, {"children", {depth + 1}}} : nlohmann::json{{"mesh", cube}});
    add_default_scene(gltf);
    expect_refused(pack_cli(gltf.write(dir / "deep.gltf"), dir / "deep.tpk"), "node 32: nested 33 deep, more than the 32");
  }
}

TEST(InstancedPack, InstancedFlagsTakeTheirInputKind) {
  TempDir dir("pack_flags");
  write_text(dir / "a.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  const auto r = pack_cli(dir / "a.obj", dir / "a.tpk", "--instances");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--instances takes a glTF input"), std::string::npos) << r.output;
  EXPECT_FALSE(r.wrote);
}

}  // namespace
}  // namespace tessera::testing
