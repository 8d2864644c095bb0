// Rendering instanced scenes (docs/instances.md) with tessera-render on the host backend: OBJ groups
// under identity instances render the flattened scene's very image, --time T renders the scene's
// nodes baked at T, --instance-transform renders the object packed in that place, and modes and
// devices that do not trace instances refuse the scene with one error (the vct mode traces them:
// tests/test_instanced_vct.cpp).
#include <gtest/gtest.h>

#include "common/base/file_io.h"
#include "instanced_pack_support.h"
#include "test_helpers.h"

namespace tessera::testing {
namespace {

std::string render_bin() { return (binary_dir() / "worker/tessera-render").string() + " "; }

// A host raytrace render of `scene` into `png`, from a fixed view.
CommandResult render(const std::filesystem::path& scene, const std::filesystem::path& png, const std::string& extra = "",
                     const std::string& view = "--eye 2,3,9 --target 2,0.5,0") {
  return run_command(render_bin() + shell_word(scene) + " -o " + shell_word(png) + " --device host --size 96x64 " + view + " " +
                     extra);
}

// Two cubes of one mesh: node 0 still; node 1 moving (translation LINEAR, rotation LINEAR), or still at `at`.
std::filesystem::path write_pair(const std::filesystem::path& path, const anim::Trs* at) {
  AnimatedGltf gltf;
  const int cube = add_cube_mesh(gltf, 1.0f);
  gltf.node({{"mesh", cube}, {"rotation", {0.0, 0.2588190, 0.0, 0.9659258}}});
  if (at) {
    gltf.node({{"mesh", cube},
               {"translation", {at->translation[0], at->translation[1], at->translation[2]}},
               {"rotation", {at->rotation[0], at->rotation[1], at->rotation[2], at->rotation[3]}},
               {"scale", {at->scale[0], at->scale[1], at->scale[2]}}});
  } else {
    const int node = gltf.node({{"mesh", cube}, {"translation", {3.0, 0.0, 0.0}}});
    const int times = gltf.accessor({0.0f, 1.0f, 2.0f}, "SCALAR");
    gltf.channel(0, node, "translation", "LINEAR", times, gltf.accessor({3, 0, 0, 3, 1.5f, 0, 3, 0, 1}, "VEC3"));
    gltf.channel(0, node, "rotation", "LINEAR", times,
                 gltf.accessor({0, 0, 0, 1, 0.38268343f, 0, 0, 0.92387953f, 0, 0, 0, 1}, "VEC4"));
  }
  add_default_scene(gltf);
  return gltf.write(path);
}

void expect_same_png(const std::filesystem::path& a, const std::filesystem::path& b) {
  const auto x = read_file_bytes(a), y = read_file_bytes(b);
  ASSERT_FALSE(x.empty());
  EXPECT_TRUE(x == y) << a << " and " << b << " differ";
}

TEST(InstancedRender, ObjGroupsRenderTheFlattenedImage) {
  TempDir dir("render_groups");
  write_text(dir / "parts.obj", grouped_boxes_obj(1));
  const std::string pack = (binary_dir() / "tessera-pack").string() + " " + shell_word(dir / "parts.obj") + " -o ";
  ASSERT_EQ(run_command(pack + shell_word(dir / "groups.tpk") + " --keep-obj-groups").exit_code, 0);
  ASSERT_EQ(run_command(pack + shell_word(dir / "flat.tpk")).exit_code, 0);
  for (const char* view : {"", "--eye -1,2,4 --target 1.5,0,0"}) {  // the scene's own camera, and one close by
    const auto a = render(dir / "groups.tpk", dir / "groups.png", "", view);
    ASSERT_EQ(a.exit_code, 0) << a.output;
    ASSERT_EQ(render(dir / "flat.tpk", dir / "flat.png", "", view).exit_code, 0);
    expect_same_png(dir / "groups.png", dir / "flat.png");
  }
}

TEST(InstancedRender, TimeRendersTheNodesBakedAtThatTime) {
  TempDir dir("render_time");
  pack::pack_scene(instanced_pack_options(write_pair(dir / "moving.gltf", nullptr), dir / "moving.tpk"));
  const PackedScene moving = PackedScene::load(dir / "moving.tpk");
  for (const double t : {0.6, 1.5}) {
    anim::Pose pose;
    ASSERT_TRUE(anim::evaluate(moving.scene_nodes(), t, anim::Playback::loop, pose));
    pack::pack_scene(instanced_pack_options(write_pair(dir / "baked.gltf", &pose.local[1]), dir / "baked.tpk"));
    const auto r = render(dir / "moving.tpk", dir / "moving.png", "--time " + std::to_string(t));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_EQ(render(dir / "baked.tpk", dir / "baked.png").exit_code, 0);
    expect_same_png(dir / "moving.png", dir / "baked.png");
  }
  // Another time is another image.
  ASSERT_EQ(render(dir / "moving.tpk", dir / "other.png", "--time 0.2").exit_code, 0);
  EXPECT_NE(read_file_bytes(dir / "other.png"), read_file_bytes(dir / "moving.png"));
}

TEST(InstancedRender, InstanceTransformRendersTheObjectPackedThere) {
  TempDir dir("render_moved");
  anim::Trs there;
  there.translation = {4.0f, 0.5f, 1.0f};
  there.scale = {1.5f, 0.5f, 1.0f};
  pack::pack_scene(instanced_pack_options(write_pair(dir / "there.gltf", &there), dir / "there.tpk"));
  pack::pack_scene(instanced_pack_options(write_pair(dir / "moving.gltf", nullptr), dir / "moving.tpk"));
  const auto r = render(dir / "moving.tpk", dir / "moved.png", "--time 0.3 --instance-transform 1:1.5,0,0,4,0,0.5,0,0.5,0,0,1,1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(render(dir / "there.tpk", dir / "there.png").exit_code, 0);
  expect_same_png(dir / "moved.png", dir / "there.png");
}

// PoCL's CPU paths (packets traced lane by lane) and the GPU code path (TESSERA_CPU_PATHS=off) render
// a moved instanced scene as the host does, colour and depth.
TEST(InstancedRender, OpenClPathsEqualTheHost) {
  TempDir dir("render_opencl");
  pack::pack_scene(instanced_pack_options(write_pair(dir / "moving.gltf", nullptr), dir / "moving.tpk"));
  const std::string motion = "--time 0.8 --instance-transform 0:0.8,0,0,0.5,0,1.2,0,0,0,0,1,0.5 --depth-out ";
  ASSERT_EQ(render(dir / "moving.tpk", dir / "host.png", motion + shell_word(dir / "host_depth.png")).exit_code, 0);
  for (const char* paths : {"", "TESSERA_CPU_PATHS=off "}) {
    const auto r = run_command(std::string(paths) + render_bin() + shell_word(dir / "moving.tpk") + " -o " + shell_word(dir / "cl.png") +
                               " --device cpu --size 96x64 --eye 2,3,9 --target 2,0.5,0 " + motion +
                               shell_word(dir / "cl_depth.png"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    expect_same_png(dir / "cl.png", dir / "host.png");
    expect_same_png(dir / "cl_depth.png", dir / "host_depth.png");
  }
}

TEST(InstancedRender, BadMotionArgumentsAndUntracedModesAreOneError) {
  TempDir dir("render_refused");
  pack::pack_scene(instanced_pack_options(write_pair(dir / "moving.gltf", nullptr), dir / "moving.tpk"));
  struct Case {
    std::string args, words;
    int exit_code;
  };
  const Case cases[] = {
      {"--instance-transform 1:1,0,0,0,0,0,0,0,0,0,1,0", "scale 0", 2},
      {"--instance-transform 1:1,0,0", "12 comma-separated numbers", 2},
      {"--instance-transform 9:1,0,0,0,0,1,0,0,0,0,1,0", "instance 9: no such instance", 1},
      {"--time nan", "--time", 2},
  };
  for (const Case& c : cases) {
    const auto r = render(dir / "moving.tpk", dir / "x.png", c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args << ": " << r.output;
    EXPECT_NE(r.output.find(c.words), std::string::npos) << c.args << ": " << r.output;
    EXPECT_NE(r.output.find("tessera-render: error: "), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir / "x.png")) << c.args;
  }
  write_text(dir / "a.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  ASSERT_EQ(run_command((binary_dir() / "tessera-pack").string() + " " + shell_word(dir / "a.obj") + " -o " + shell_word(dir / "a.tpk")).exit_code, 0);
  const auto r = render(dir / "a.tpk", dir / "x.png", "--time 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("need an instanced scene"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tessera::testing
