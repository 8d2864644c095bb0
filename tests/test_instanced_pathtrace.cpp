// The pathtrace mode on instanced scenes (docs/instances.md) with tessera-render: OBJ groups under
// identity instances path-trace the flattened scene's very image (host, PoCL's CPU paths and its GPU
// code path), a moved instance renders as the scene packed with the object in that place, and an
// emissive instance lights the scene where its instance puts it (emitters sampled in world space,
// areas under scale), in the pathtrace and the raytrace mode; and a ray cone's curvature term reads
// an instance's surface as placed.
#include <gtest/gtest.h>

#include <array>

#include "common/base/file_io.h"
#include "common/image/metrics.h"
#include "common/image/png_io.h"
#include "instanced_pack_support.h"
#include "kernels/shading/surface.h"
#include "pack_test_support.h"
#include "test_helpers.h"
#include "worker/render/host_instances.h"

namespace tessera::testing {
namespace {

std::string render_bin() { return (binary_dir() / "worker/tessera-render").string() + " "; }

// A render of `scene` into `png` from above the floor: path-traced (mono, the default seed) unless
// `extra` names another mode. `env` comes before the command (TESSERA_CPU_PATHS=off).
CommandResult render(const std::filesystem::path& scene, const std::filesystem::path& png, const std::string& extra = "",
                     const std::string& device = "host", const std::string& env = "") {
  const bool other_mode = extra.find("--mode") != std::string::npos;
  return run_command(env + render_bin() + shell_word(scene) + " -o " + shell_word(png) + " --device " + device +
                     " --size 64x48 --eye 0,6,5 --target 0,0,0 " + (other_mode ? "" : "--mode pathtrace --spp 4 ") + extra);
}

void expect_same_png(const std::filesystem::path& a, const std::filesystem::path& b) {
  const auto x = read_file_bytes(a), y = read_file_bytes(b);
  ASSERT_FALSE(x.empty());
  EXPECT_TRUE(x == y) << a << " and " << b << " differ";
}

// An OBJ box's 8 corners and 6 outward faces, vertices numbered from `first` (1-based).
std::string obj_box(float x0, float y0, float z0, float x1, float y1, float z1, int first) {
  std::string s;
  for (int c = 0; c < 8; ++c)
    s += "v " + std::to_string((c & 1) ? x1 : x0) + " " + std::to_string((c & 2) ? y1 : y0) + " " +
         std::to_string((c & 4) ? z1 : z0) + "\n";
  const int quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  for (const auto& q : quads)
    s += "f " + std::to_string(first + q[0]) + " " + std::to_string(first + q[1]) + " " + std::to_string(first + q[2]) + " " +
         std::to_string(first + q[3]) + "\n";
  return s;
}

// A floor, a block and a lamp (a quad shining down) as three OBJ groups.
void write_lit_groups(const std::filesystem::path& dir) {
  write_text(dir / "lit.mtl", "newmtl white\nKd 0.8 0.8 0.8\nnewmtl lamp\nKd 0 0 0\nKe 6 6 6\n");
  std::string obj = "mtllib lit.mtl\ng floor\nusemtl white\nv -4 0 -3\nv -4 0 3\nv 4 0 3\nv 4 0 -3\nf 1 2 3 4\n";
  obj += "g block\nusemtl white\n" + obj_box(0.5f, 0.0f, -0.5f, 1.5f, 1.0f, 0.5f, 5);
  obj += "g lamp\nusemtl lamp\nv -1.5 2 -0.5\nv -0.5 2 -0.5\nv -0.5 2 0.5\nv -1.5 2 0.5\nf 13 14 15 16\n";
  write_text(dir / "lit.obj", obj);
}

TEST(InstancedPathtrace, ObjGroupsTraceTheFlattenedImage) {
  TempDir dir("pt_groups");
  write_lit_groups(dir.path());
  const std::string pack = (binary_dir() / "tessera-pack").string() + " " + shell_word(dir / "lit.obj") + " -o ";
  ASSERT_EQ(run_command(pack + shell_word(dir / "groups.tpk") + " --keep-obj-groups").exit_code, 0);
  ASSERT_EQ(run_command(pack + shell_word(dir / "flat.tpk")).exit_code, 0);
  ASSERT_TRUE(PackedScene::load(dir / "groups.tpk").instanced());
  // The host, PoCL's CPU paths and its GPU code path, each against its own render of the flat pack.
  const std::pair<const char*, const char*> devices[] = {{"host", ""}, {"cpu", ""}, {"cpu", "TESSERA_CPU_PATHS=off "}};
  for (const auto& [device, env] : devices) {
    SCOPED_TRACE(std::string(env) + device);
    const auto a = render(dir / "groups.tpk", dir / "groups.png", "", device, env);
    ASSERT_EQ(a.exit_code, 0) << a.output;
    const auto b = render(dir / "flat.tpk", dir / "flat.png", "", device, env);
    ASSERT_EQ(b.exit_code, 0) << b.output;
    expect_same_png(dir / "groups.png", dir / "flat.png");
  }
}

// A quad mesh of two triangles (unindexed) with corners `c` (counter-clockwise seen from the side
// it faces) and an optional material; returns the glTF mesh index.
int add_quad_mesh(AnimatedGltf& gltf, const std::array<std::array<float, 3>, 4>& c, int material = -1) {
  std::vector<float> positions;
  std::array<float, 3> lo = c[0], hi = c[0];
  for (int corner : {0, 1, 2, 0, 2, 3})
    for (int a = 0; a < 3; ++a) {
      positions.push_back(c[size_t(corner)][size_t(a)]);
      lo[size_t(a)] = std::min(lo[size_t(a)], c[size_t(corner)][size_t(a)]);
      hi[size_t(a)] = std::max(hi[size_t(a)], c[size_t(corner)][size_t(a)]);
    }
  const int accessor = gltf.accessor(positions, "VEC3");
  gltf.json["accessors"][size_t(accessor)]["min"] = lo;
  gltf.json["accessors"][size_t(accessor)]["max"] = hi;
  nlohmann::json primitive = {{"attributes", {{"POSITION", accessor}}}};
  if (material >= 0) primitive["material"] = material;
  if (!gltf.json.contains("meshes")) gltf.json["meshes"] = nlohmann::json::array();
  gltf.json["meshes"].push_back({{"primitives", {primitive}}});
  return int(gltf.json["meshes"].size()) - 1;
}

constexpr std::array<float, 3> kCubeStart{0.0f, 0.4f, -1.0f};

// Node 0 a floor, node 1 a lamp (a 1 x 1 quad shining down, object space around the origin) at
// `lamp` with scale `lamp_scale`, node 2 a cube at `cube`, or (none) sliding from z = -1 to 1 over 1 s.
std::filesystem::path write_lamp_scene(const std::filesystem::path& path, std::array<float, 3> lamp, float lamp_scale = 1.0f,
                                       const std::array<float, 3>* cube_at = nullptr) {
  AnimatedGltf gltf;
  gltf.json["materials"] = {{{"emissiveFactor", {1.0, 1.0, 1.0}}, {"extensions", {{"KHR_materials_emissive_strength", {{"emissiveStrength", 8.0}}}}}}};
  gltf.json["extensionsUsed"] = {"KHR_materials_emissive_strength"};
  const int floor = add_quad_mesh(gltf, {{{-4, 0, -3}, {-4, 0, 3}, {4, 0, 3}, {4, 0, -3}}});
  const int lamp_mesh = add_quad_mesh(gltf, {{{-0.5f, 0, -0.5f}, {0.5f, 0, -0.5f}, {0.5f, 0, 0.5f}, {-0.5f, 0, 0.5f}}}, 0);
  const int cube = add_cube_mesh(gltf, 0.8f);
  gltf.node({{"mesh", floor}});
  gltf.node({{"mesh", lamp_mesh}, {"translation", {lamp[0], lamp[1], lamp[2]}}, {"scale", {lamp_scale, 1.0f, lamp_scale}}});
  const std::array<float, 3>& at = cube_at ? *cube_at : kCubeStart;
  const int node = gltf.node({{"mesh", cube}, {"translation", {at[0], at[1], at[2]}}});
  if (!cube_at) {
    const int times = gltf.accessor({0.0f, 1.0f}, "SCALAR");
    gltf.channel(0, node, "translation", "LINEAR", times, gltf.accessor({0, 0.4f, -1, 0, 0.4f, 1}, "VEC3"));
  }
  add_default_scene(gltf);
  return gltf.write(path);
}

// Mean brightness (R + G + B, 0..765) of the image's left and right thirds.
std::array<double, 2> side_brightness(const ImageRgba8& image) {
  std::array<double, 2> sum{0, 0};
  std::array<int, 2> count{0, 0};
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) {
      const int side = x < image.width() / 3 ? 0 : x >= image.width() - image.width() / 3 ? 1 : -1;
      if (side < 0) continue;
      const uint8_t* p = &image.pixels()[(size_t(y) * size_t(image.width()) + size_t(x)) * 4];
      sum[size_t(side)] += double(p[0]) + p[1] + p[2];
      ++count[size_t(side)];
    }
  return {sum[0] / count[0], sum[1] / count[1]};
}

// The lamp packed at the left, moved to the right by --instance-transform (and made 1.5 times as
// wide, so its light comes from 2.25 times the area): the same pixels as the scene packed with the
// lamp there, and a floor lit on the right, not on the left where object space or the packed place
// would have it.
TEST(InstancedPathtrace, AMovedEmissiveInstanceLightsWhereItIsPlaced) {
  TempDir dir("pt_lamp");
  pack::pack_scene(instanced_pack_options(write_lamp_scene(dir / "left.gltf", {-2.0f, 1.2f, 0.0f}, 1.0f, &kCubeStart), dir / "left.tpk"));
  const auto right_gltf = write_lamp_scene(dir / "right.gltf", {2.0f, 1.2f, 0.0f}, 1.5f, &kCubeStart);
  pack::pack_scene(instanced_pack_options(right_gltf, dir / "right.tpk"));
  pack_for_test(right_gltf, std::nullopt, dir / "right_flat.tpk");
  ASSERT_FALSE(PackedScene::load(dir / "right_flat.tpk").instanced());
  const std::string moved = "--instance-transform 1:1.5,0,0,2,0,1,0,1.2,0,0,1.5,0";
  for (const std::string mode : {"--mode pathtrace --spp 4", "--mode raytrace --light-samples 4"}) {
    SCOPED_TRACE(mode);
    const auto image = [&](const std::filesystem::path& scene, const std::string& name, const std::string& extra) {
      const auto r = render(scene, dir / name, mode + " " + extra);
      EXPECT_EQ(r.exit_code, 0) << r.output;
      return read_image(dir / name);
    };
    const ImageRgba8 at_left = image(dir / "left.tpk", "left.png", "");
    const ImageRgba8 at_right = image(dir / "left.tpk", "moved.png", moved);
    // The object packed in that place, two levels: the same transform, the same pixels.
    EXPECT_EQ(at_right, image(dir / "right.tpk", "right.png", ""));
    // Packed flat (the lamp's triangles in world space): the same image to float rounding.
    EXPECT_GT(psnr_rgb(at_right, image(dir / "right_flat.tpk", "right_flat.png", "")), 40.0);
    // The lit side follows the lamp (the raytrace mode adds an even ambient term to both sides).
    const auto left_lit = side_brightness(at_left), right_lit = side_brightness(at_right);
    EXPECT_GT(left_lit[0], left_lit[1] + 30) << left_lit[0] << " " << left_lit[1];
    EXPECT_GT(right_lit[1], right_lit[0] + 30) << right_lit[0] << " " << right_lit[1];
    EXPECT_GT(right_lit[1], left_lit[0] + 10) << "the wider lamp sheds more light";
  }
}

// --time in the pathtrace mode: the cube halfway along its slide renders as the scene packed with
// it there (both instanced: the same transforms, the same pixels), on the host and PoCL's CPU paths;
// another instant is another image.
TEST(InstancedPathtrace, TimeRendersTheNodesBakedAtThatTime) {
  TempDir dir("pt_time");
  const std::array<float, 3> lamp{-2.0f, 1.2f, 0.0f}, halfway{0.0f, 0.4f, 0.0f};
  pack::pack_scene(instanced_pack_options(write_lamp_scene(dir / "moving.gltf", lamp), dir / "moving.tpk"));
  pack::pack_scene(instanced_pack_options(write_lamp_scene(dir / "baked.gltf", lamp, 1.0f, &halfway), dir / "baked.tpk"));
  for (const char* device : {"host", "cpu"}) {
    SCOPED_TRACE(device);
    const auto r = render(dir / "moving.tpk", dir / "moving.png", "--time 0.5", device);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_EQ(render(dir / "baked.tpk", dir / "baked.png", "", device).exit_code, 0);
    expect_same_png(dir / "moving.png", dir / "baked.png");
  }
  ASSERT_EQ(render(dir / "moving.tpk", dir / "other.png", "--time 0.1").exit_code, 0);
  EXPECT_NE(read_file_bytes(dir / "other.png"), read_file_bytes(dir / "moving.png"));
}


// The curvature of a triangle cut from the unit sphere (vertex normals radial) placed at scale 2 is
// that of a sphere of radius 2, as where the packer bakes the same node: corners and normals are
// the world's.
TEST(InstancedShading, CurvatureIsThatOfTheSurfaceAsPlaced) {
  TempDir dir("inst_curvature");
  AnimatedGltf gltf;
  const std::vector<float> octant{1, 0, 0, 0, 1, 0, 0, 0, 1};
  const int positions = gltf.accessor(octant, "VEC3"), normals = gltf.accessor(octant, "VEC3");
  gltf.json["accessors"][size_t(positions)]["min"] = {0.0, 0.0, 0.0};
  gltf.json["accessors"][size_t(positions)]["max"] = {1.0, 1.0, 1.0};
  gltf.json["meshes"] = {{{"primitives", {{{"attributes", {{"POSITION", positions}, {"NORMAL", normals}}}}}}}};
  gltf.node({{"mesh", 0}, {"scale", {2.0, 2.0, 2.0}}});
  gltf.node({{"mesh", 0}, {"translation", {10.0, 0.0, 0.0}}});  // a second instance: the scene stays two-level
  add_default_scene(gltf);
  const auto input = gltf.write(dir / "octant.gltf");
  pack::pack_scene(instanced_pack_options(input, dir / "instanced.tpk"));
  pack_for_test(input, std::nullopt, dir / "flat.tpk");
  const auto curvature = [](const PackedScene& scene) {
    SceneView view = scene.host_view();
    ShadingData shading = ShadingData::build(scene);
    std::optional<HostInstances> instances;
    if (scene.instanced()) {
      instances.emplace(scene, shading);
      instances->place(SceneMotion::of_scene(scene, "scene")->top_level(), view, shading);
    }
    const ShadingContext context = shading.host_context();
    const float3 dir = v3_normalize(make_float3(-1.0f, -1.0f, -1.0f));
    Hit hit{};
    EXPECT_TRUE(scene_intersect_closest(&view, make_float3(5.0f, 5.0f, 5.0f), dir, 0.0f, TS_INFINITY, &hit));
    const Surface s = surface_at(&view, &context, dir, &hit);
    return surface_curvature(&view, &s, hit.tri);
  };
  const PackedScene instanced = PackedScene::load(dir / "instanced.tpk"), flat = PackedScene::load(dir / "flat.tpk");
  ASSERT_TRUE(instanced.instanced());
  ASSERT_FALSE(flat.instanced());
  EXPECT_NEAR(curvature(flat), 0.5f, 0.02f);
  EXPECT_NEAR(curvature(instanced), curvature(flat), 0.005f);
}

}  // namespace
}  // namespace tessera::testing
