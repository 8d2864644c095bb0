// glTF 2.0 input (common/scene/gltf_reader.h): hand-written files for the node hierarchy (negative
// scale flips the winding), embedded and .glb buffers, punctual lights and cameras, the material
// rule with alpha cut-outs and samplers, and malformed files; files written by obj2gltf (npm) from
// the shared OBJ scenes pack to the same geometry and render to the same image as the OBJs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "common/image/metrics.h"
#include "common/render/camera_setup.h"
#include "common/render/shading_data.h"
#include "common/scene/mesh_loader.h"
#include "common/scene/packed_scene.h"
#include "scene-packer/packer.h"
#include "test_helpers.h"
#include "worker/render/frame_render.h"

namespace tessera {
namespace {

using testing::TempDir;

std::filesystem::path data(const std::string& name) { return testing::source_dir() / "tests/data/gltf" / name; }

std::array<float, 3> sub(const std::array<float, 3>& a, const std::array<float, 3>& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
std::array<float, 3> cross(const std::array<float, 3>& a, const std::array<float, 3>& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
float dot(const std::array<float, 3>& a, const std::array<float, 3>& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

bool has_warning(const TriangleMesh& mesh, const std::string& part) {
  return std::any_of(mesh.warnings.begin(), mesh.warnings.end(), [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

TEST(GltfReader, HierarchyTransformsAndNegativeScale) {
  const TriangleMesh mesh = load_mesh(data("transforms.gltf"));
  ASSERT_EQ(mesh.triangle_count(), 6u);  // one quad, three instances
  ASSERT_TRUE(mesh.has_normals());
  // Every triangle winds counter-clockwise around its normal, also the mirrored instance.
  for (size_t t = 0; t < mesh.triangle_count(); ++t) {
    const uint32_t* c = &mesh.triangles[3 * t];
    const auto face = cross(sub(mesh.position(c[1]), mesh.position(c[0])), sub(mesh.position(c[2]), mesh.position(c[0])));
    const std::array<float, 3> n{mesh.normals[3 * c[0]], mesh.normals[3 * c[0] + 1], mesh.normals[3 * c[0] + 2]};
    EXPECT_GT(dot(face, n), 0.0f) << "triangle " << t;
  }
  // Instance corners: translated (5..6, 0..1, 0); scaled x2 and turned 90 degrees about +y after
  // moving 3 along z (x 6, y 0..2, z 0..-2, facing +x); mirrored in x then moved (-6..-5).
  std::vector<std::array<float, 3>> corners;
  for (size_t v = 0; v < mesh.vertex_count(); ++v) corners.push_back(mesh.position(uint32_t(v)));
  const auto near = [&](std::array<float, 3> p) {
    return std::any_of(corners.begin(), corners.end(), [&](const auto& q) {
      return std::fabs(p[0] - q[0]) < 1e-5f && std::fabs(p[1] - q[1]) < 1e-5f && std::fabs(p[2] - q[2]) < 1e-5f;
    });
  };
  for (auto p : {std::array<float, 3>{5, 0, 0}, {6, 1, 0}, {6, 0, 0}, {6, 2, -2}, {-5, 0, 0}, {-6, 1, 0}}) EXPECT_TRUE(near(p)) << p[0] << "," << p[1] << "," << p[2];
  for (size_t v = 0; v < mesh.vertex_count(); ++v) {
    const float* n = &mesh.normals[3 * v];
    const bool turned = std::fabs(mesh.position(uint32_t(v))[0] - 6.0f) < 1e-5f && std::fabs(n[0] - 1.0f) < 1e-5f;
    EXPECT_TRUE(turned || std::fabs(n[2] - 1.0f) < 1e-5f) << "vertex " << v;  // rotated instance faces +x, others +z
  }
  EXPECT_TRUE(mesh.warnings.empty());
  EXPECT_FALSE(mesh.camera.has_value());
}

TEST(GltfReader, GlbAndEmbeddedBuffersReadTheSame) {
  const TriangleMesh a = load_mesh(data("transforms.gltf")), b = load_mesh(data("transforms.glb"));
  EXPECT_EQ(a.positions, b.positions);
  EXPECT_EQ(a.normals, b.normals);
  EXPECT_EQ(a.triangles, b.triangles);
  EXPECT_EQ(a.triangle_materials, b.triangle_materials);
}

TEST(GltfReader, LightsCameraAndFlatScenes) {
  const TriangleMesh mesh = load_mesh(data("lights_camera.gltf"));
  EXPECT_EQ(mesh.triangle_count(), 1u);    // a non-indexed primitive
  EXPECT_FALSE(mesh.has_normals());        // no primitive has normals: the kernels shade flat
  ASSERT_EQ(mesh.point_lights.size(), 2u);  // the point light and the spot light as one
  EXPECT_FLOAT_EQ(mesh.point_lights[0].position().y(), 3.0f);
  EXPECT_FLOAT_EQ(mesh.point_lights[0].intensity().x(), 40.0f);
  EXPECT_FLOAT_EQ(mesh.point_lights[0].intensity().y(), 20.0f);
  EXPECT_FLOAT_EQ(mesh.point_lights[1].position().x(), 2.0f);
  EXPECT_TRUE(has_warning(mesh, "spot lights are packed as point lights"));
  ASSERT_EQ(mesh.directional_lights.size(), 1u);  // -z turned -90 degrees about x: straight down
  EXPECT_NEAR(mesh.directional_lights[0].direction().y(), -1.0f, 1e-5f);
  EXPECT_NEAR(mesh.directional_lights[0].direction().z(), 0.0f, 1e-5f);
  EXPECT_FLOAT_EQ(mesh.directional_lights[0].radiance().x(), 2.0f);
  ASSERT_TRUE(mesh.camera.has_value());  // the first camera in the hierarchy
  EXPECT_FLOAT_EQ(mesh.camera->position().z(), 4.0f);
  EXPECT_NEAR(mesh.camera->vertical_fov_degrees(), 50.0f, 1e-3f);
  // Pitched 45 degrees down: the camera's -z axis points along (0, -1, -1) / sqrt 2.
  Pose pose = pose_from_manifest(*mesh.camera);
  const auto& q = pose.orientation;
  const float fy = -(2 * (q[2] * q[3] - q[0] * q[1])), fz = -(1 - 2 * (q[1] * q[1] + q[2] * q[2]));
  EXPECT_NEAR(fy, -std::sqrt(0.5f), 1e-4f);
  EXPECT_NEAR(fz, -std::sqrt(0.5f), 1e-4f);
  EXPECT_TRUE(has_warning(mesh, "later cameras are ignored"));
}

TEST(GltfReader, MaterialRuleAlphaAndSamplers) {
  const TriangleMesh mesh = load_mesh(data("materials.gltf"));
  ASSERT_EQ(mesh.triangle_count(), 8u);
  std::map<std::string, tpk::Material> by_name;
  for (const auto& m : mesh.materials) by_name[m.name()] = m;
  EXPECT_EQ(by_name.at("opaque").type(), tpk::DIFFUSE);
  EXPECT_EQ(by_name.at("lamp").type(), tpk::EMISSIVE);
  EXPECT_FLOAT_EQ(by_name.at("lamp").emission().x(), 8.0f);  // factor x KHR_materials_emissive_strength
  EXPECT_FLOAT_EQ(by_name.at("lamp").emission().z(), 2.0f);
  EXPECT_EQ(by_name.at("glass").type(), tpk::GLASS);
  EXPECT_FLOAT_EQ(by_name.at("glass").ior(), 1.33f);
  EXPECT_EQ(by_name.at("chrome").type(), tpk::MIRROR);
  EXPECT_FLOAT_EQ(by_name.at("chrome").diffuse().z(), 0.8f);
  EXPECT_EQ(by_name.at("rough metal").type(), tpk::DIFFUSE);  // metallic but rough: its base colour
  EXPECT_FLOAT_EQ(by_name.at("mirrored").diffuse().y(), 0.25f);

  const auto texture = [&](const std::string& name) -> const TextureImage& {
    return mesh.textures.at(size_t(by_name.at(name).texture()));
  };
  const auto alpha = [](const TextureImage& t, uint32_t x, uint32_t y) { return t.rgba[(size_t(y) * t.width + x) * 4 + 3]; };
  // OPAQUE ignores alpha; MASK at 0.3 keeps 255 and 128, cuts 40 and 0; BLEND (x 0.9) cuts at 0.5.
  EXPECT_FALSE(texture("opaque").has_alpha_mask);
  EXPECT_EQ(alpha(texture("opaque"), 1, 1), 255);
  const TextureImage& mask = texture("mask");
  EXPECT_TRUE(mask.has_alpha_mask);
  EXPECT_EQ(alpha(mask, 0, 0), 255);
  EXPECT_EQ(alpha(mask, 1, 0), 255);
  EXPECT_EQ(alpha(mask, 0, 1), 0);
  EXPECT_EQ(alpha(mask, 1, 1), 0);
  const TextureImage& blend = texture("blend");
  EXPECT_EQ(alpha(blend, 0, 0), 255);
  EXPECT_EQ(alpha(blend, 1, 0), 0);  // 128 / 255 x 0.9 < 0.5
  // MIRRORED_REPEAT in u: baked twice as wide, the right half mirrored.
  const TextureImage& mirrored = texture("mirrored");
  ASSERT_EQ(mirrored.width, 4u);
  ASSERT_EQ(mirrored.height, 2u);
  for (uint32_t x = 0; x < 4; ++x)
    EXPECT_EQ(mirrored.rgba[x * 4], x == 0 || x == 3 ? 255 : 0) << "texel " << x;  // red at 0 and mirrored at 3

  // Texture coordinates: v flipped; halved in u where mirrored; set 1 (normalized shorts) for "blend".
  const auto uv_of_material = [&](const std::string& name) {
    std::vector<std::array<float, 2>> uv;
    for (size_t t = 0; t < mesh.triangle_count(); ++t)
      if (mesh.materials[mesh.triangle_materials[t]].name() == name)
        for (int c = 0; c < 3; ++c) {
          const uint32_t v = mesh.triangles[3 * t + size_t(c)];
          uv.push_back({mesh.texcoords[2 * v], mesh.texcoords[2 * v + 1]});
        }
    return uv;
  };
  const auto opaque_uv = uv_of_material("opaque");
  ASSERT_EQ(opaque_uv.size(), 3u);
  EXPECT_FLOAT_EQ(opaque_uv[1][0], 1.0f);
  EXPECT_FLOAT_EQ(opaque_uv[0][1], 1.0f);  // glTF v 0 is the image's top row: Tessera's v 1
  EXPECT_FLOAT_EQ(uv_of_material("mirrored")[1][0], 0.5f);
  EXPECT_NEAR(uv_of_material("blend")[1][0], 0.75f, 1e-4f);
  EXPECT_NEAR(uv_of_material("blend")[2][1], 0.25f, 1e-4f);

  // One line for each thing not shown as written.
  for (const char* w : {"alpha blending is rendered as a cut-out", "normal maps are not supported",
                        "material extension KHR_materials_clearcoat is not supported"})
    EXPECT_TRUE(has_warning(mesh, w)) << w;
  EXPECT_EQ(std::count_if(mesh.warnings.begin(), mesh.warnings.end(),
                          [](const std::string& w) { return w.find("normal maps") != std::string::npos; }),
            1);
}

// A sparse accessor: the buffer view's values with the listed elements replaced.
TEST(GltfReader, SparseAccessorsApplyTheirSubstitutions) {
  const TriangleMesh mesh = load_mesh(data("sparse_positions.gltf"));
  ASSERT_EQ(mesh.triangle_count(), 2u);
  std::vector<std::array<float, 3>> positions;
  for (uint32_t v = 0; v < mesh.vertex_count(); ++v) positions.push_back(mesh.position(v));
  std::sort(positions.begin(), positions.end());
  const std::vector<std::array<float, 3>> expected = {{0, 0, 5}, {0, 1, 5}, {1, 0, 0}, {1, 1, 0}};
  EXPECT_EQ(positions, expected);
}

TEST(GltfReader, MalformedFilesAreOneLineErrorsAndNoOutput) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bad_accessor_bounds.gltf", "runs past its buffer view"},
      {"bad_buffer_view.gltf", "runs past its buffer"},
      {"bad_index.gltf", "index 7 at position 1 is out of range (3 vertices)"},
      {"bad_accessor_index.gltf", "accessor 9 does not exist"},
      {"bad_material_index.gltf", "material 3"},
      {"node_cycle.gltf", "appears twice in the hierarchy"},
      {"required_extension.gltf", "requires glTF extension KHR_draco_mesh_compression"},
      {"missing_buffer.gltf", "missing.bin"},
      {"bad_json.gltf", "bad_json.gltf"},
      {"bad_sparse_order.gltf", "sparse accessor 0: its indices are not strictly increasing"},
  };
  TempDir dir("gltf_errors");
  for (const auto& [file, expected] : cases) {
    try {
      load_mesh(data(file));
      ADD_FAILURE() << file << " was read";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(expected), std::string::npos) << file << ": " << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << file << ": " << message;
    }
    const auto out = dir / (file + ".tpk");
    const auto result = testing::run_command((testing::binary_dir() / "tessera-pack").string() + " " + data(file).string() +
                                             " -o " + out.string());
    EXPECT_EQ(result.exit_code, 1) << result.output;
    EXPECT_FALSE(std::filesystem::exists(out)) << file;
  }
}

// Values that read fine but cannot be rendered (beyond float, NaN, negative colours), and files that
// name what is not there: one error line each, no output, and the input itself never overwritten.
TEST(GltfReader, UnrenderableValuesAndMissingFilesAreOneLineErrors) {
  TempDir dir("gltf_values");
  const nlohmann::json lights = nlohmann::json::parse(read_file_text(data("lights_camera.gltf")));
  const nlohmann::json materials = nlohmann::json::parse(read_file_text(data("materials.gltf")));
  for (const char* file : {"materials.bin", "checker.png"}) std::filesystem::copy_file(data(file), dir / file);
  std::vector<std::tuple<std::string, nlohmann::json, std::string>> cases;
  auto far_light = lights;
  far_light["nodes"][1]["translation"] = {1e39, 3, 1};  // a double, beyond float
  cases.emplace_back("far_light.gltf", far_light, "point light 0 is at (inf, 3, 1)");
  auto bright_light = lights;
  bright_light["extensions"]["KHR_lights_punctual"]["lights"][2]["intensity"] = 1e39;
  cases.emplace_back("bright_light.gltf", bright_light, "directional light 0 has radiance (inf");
  auto negative_colour = materials;
  negative_colour["materials"][3]["pbrMetallicRoughness"]["baseColorFactor"] = {-1, 2, 0.5, 1};
  cases.emplace_back("negative_colour.gltf", negative_colour, "material 'mirrored' has colour (-1, 2, 0.5)");
  auto missing_image = materials;
  missing_image["images"][0]["uri"] = "nothere.png";
  cases.emplace_back("missing_image.gltf", missing_image, "image 0 'nothere.png' cannot be read: no such file");
  auto short_uri = lights;
  short_uri["buffers"][0]["byteLength"] = short_uri["buffers"][0]["byteLength"].get<int>() + 1;
  cases.emplace_back("short_uri.gltf", short_uri, "data URI is not base64 data of its byteLength bytes");
  for (const auto& [file, json, expected] : cases) {
    testing::write_text(dir / file, json.dump());
    const auto out = dir / (file + ".tpk");
    const auto r = testing::run_command((testing::binary_dir() / "tessera-pack").string() + " " + (dir / file).string() +
                                        " -o " + out.string());
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << file << ": " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    EXPECT_FALSE(std::filesystem::exists(out)) << file;
  }
  // -o naming the input (or anything else that is not a packed scene) is refused before any work
  const std::string source = read_file_text(data("lights_camera.gltf"));
  testing::write_text(dir / "scene.gltf", source);
  const auto r = testing::run_command((testing::binary_dir() / "tessera-pack").string() + " " + (dir / "scene.gltf").string() +
                                      " -o " + (dir / "scene.gltf").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("is not a packed scene (.tpk): not overwriting it"), std::string::npos) << r.output;
  EXPECT_EQ(read_file_text(dir / "scene.gltf"), source);
  // ... while a packed scene is replaced as before
  const auto tpk = dir / "scene.tpk";
  for (int i = 0; i < 2; ++i) {
    const auto again = testing::run_command((testing::binary_dir() / "tessera-pack").string() + " " +
                                            (dir / "scene.gltf").string() + " -o " + tpk.string());
    EXPECT_EQ(again.exit_code, 0) << again.output;
  }
}

TEST(GltfReader, TruncatedOrCorruptGlbIsAnErrorNeverACrash) {
  const std::vector<uint8_t> whole = read_file_bytes(data("triangle.glb"));
  TempDir dir("glb_truncated");
  const auto path = dir / "t.glb";
  EXPECT_EQ(load_mesh(data("triangle.glb")).triangle_count(), 1u);
  for (size_t length = 0; length < whole.size(); length += (length < 40 ? 1 : 3)) {
    write_file_atomically(path, whole.data(), length);
    EXPECT_THROW(load_mesh(path), Error) << "length " << length;
  }
  // Chunk lengths pointing past the end, and every single-byte corruption of the header.
  for (size_t offset : {8u, 12u, 16u}) {
    std::vector<uint8_t> bad = whole;
    bad[offset + 2] = 0x7F;
    write_file_atomically(path, bad.data(), bad.size());
    EXPECT_THROW(load_mesh(path), Error) << "offset " << offset;
  }
  for (size_t offset = 20; offset < whole.size(); offset += 7) {  // JSON and BIN bytes: an error or a mesh, never a crash
    std::vector<uint8_t> bad = whole;
    bad[offset] ^= 0xA5;
    write_file_atomically(path, bad.data(), bad.size());
    try {
      load_mesh(path);
    } catch (const Error&) {
    }
  }
}

// ---- files no one here wrote: obj2gltf (npm) conversions of the shared OBJ scenes ----

std::optional<std::filesystem::path> obj2gltf() {
  const auto tool = testing::source_dir() / ".node/node_modules/.bin/obj2gltf";
  if (!std::filesystem::exists(tool) || testing::run_command("node --version").exit_code != 0) return std::nullopt;
  return tool;
}

std::filesystem::path convert(const std::filesystem::path& tool, const std::filesystem::path& obj, const std::filesystem::path& out) {
  const auto r = testing::run_command(tool.string() + " -i " + obj.string() + " -o " + out.string());
  if (r.exit_code != 0) throw Error("obj2gltf failed: " + r.output);
  return out;
}

pack::PackReport pack(const std::filesystem::path& input, const std::filesystem::path& out,
                      const std::filesystem::path& settings) {
  pack::PackOptions o;
  o.input = input;
  o.output = out;
  o.settings = settings;
  o.show_progress = false;
  o.zstd_level = 1;
  o.max_texture_size = 256;
  return pack::pack_scene(o);
}

// The triangles of a packed scene as sorted corner tuples (decoded position, normal, material name).
std::vector<std::vector<float>> triangle_set(const PackedScene& scene) {
  const SceneView view = scene.host_view();
  const auto runs = scene.section_as<uint32_t>(tpk::MATERIAL_RUNS);
  std::vector<std::vector<float>> out;
  for (uint32_t t = 0; t < scene.triangle_count(); ++t) {
    float3 p[3];
    scene_triangle_vertices(&view, t, &p[0], &p[1], &p[2]);
    uint32_t material = 0;
    for (size_t r = 0; r < runs.size(); r += 2)
      if (runs[r] <= t) material = runs[r + 1];
    std::vector<std::vector<float>> corners;
    for (const auto& c : p) corners.push_back({c.x, c.y, c.z});
    std::rotate(corners.begin(), std::min_element(corners.begin(), corners.end()), corners.end());  // keep the winding
    std::vector<float> row;
    for (const auto& c : corners) row.insert(row.end(), c.begin(), c.end());
    for (char ch : scene.manifest().materials(int(material)).name()) row.push_back(float(ch));
    out.push_back(row);
  }
  std::sort(out.begin(), out.end());
  return out;
}

ImageRgba8 render(const PackedScene& scene, const tpk::Camera& camera) {
  CameraSpec spec;
  spec.pose = pose_from_manifest(camera);
  spec.vertical_fov_degrees = camera.vertical_fov_degrees();
  auto host = make_tile_renderer(scene, {"host", std::nullopt, 0});
  RenderSettings settings = default_render_settings(scene);
  settings.light_samples = 256;  // emissive triangles are sampled at random: little noise left to differ
  return render_frame(*host, make_camera(spec, 64, 48), settings, 64);
}

ImageRgba8 render_both(const PackedScene& obj, const PackedScene& gltf, ImageRgba8& other) {
  other = render(gltf, obj.manifest().camera());
  return render(obj, obj.manifest().camera());
}

// A triangle mesh: the same triangles (positions, winding, material), vertices, bytes and image.
// obj2gltf gives OBJs without an MTL a 0.5 grey where Tessera's OBJ reader takes 0.8, so both get
// the same colour from the settings.
TEST(GltfFromObj2gltf, TriangleMeshPacksToTheSameGeometryBytesAndImage) {
  const auto tool = obj2gltf();
  if (!tool) GTEST_SKIP() << "node or obj2gltf missing (./tessera build installs obj2gltf into .node/)";
  TempDir dir("obj2gltf");
  testing::write_text(dir / "s.scene.txtpb", "materials { name: \"*\" diffuse { x: 0.8 y: 0.8 z: 0.8 } }\n");
  const auto obj_path = testing::scene_path("teapot/teapot_lowpoly.obj");
  const auto glb = convert(*tool, obj_path, dir / "teapot.glb");
  const auto a = pack(obj_path, dir / "obj.tpk", dir / "s.scene.txtpb");
  const auto b = pack(glb, dir / "glb.tpk", dir / "s.scene.txtpb");
  EXPECT_TRUE(b.warnings.empty()) << b.warnings.front();
  EXPECT_EQ(a.manifest.triangles(), b.manifest.triangles());
  EXPECT_EQ(a.manifest.vertices(), b.manifest.vertices());
  EXPECT_EQ(a.mesh_device_bytes + a.kdtree_device_bytes, b.mesh_device_bytes + b.kdtree_device_bytes);
  const PackedScene obj = PackedScene::load(dir / "obj.tpk"), gltf = PackedScene::load(dir / "glb.tpk");
  EXPECT_TRUE(triangle_set(obj) == triangle_set(gltf));
  ImageRgba8 ib;
  const ImageRgba8 ia = render_both(obj, gltf, ib);
  const DiffStats d = diff_stats(ia, ib, 1);
  EXPECT_EQ(d.pixels_over_threshold, 0u) << "max diff " << d.max_abs_diff;
}

// Quads: obj2gltf splits them along the other diagonal than Tessera's OBJ reader, so the triangles
// differ while the surfaces are the same; and the OBJ keeps coincident corners of different faces
// apart where the glTF reader welds equal vertices. Same triangle count and bounds, the same image
// up to edge pixels, no more vertices.
TEST(GltfFromObj2gltf, QuadMeshRendersTheSameImage) {
  const auto tool = obj2gltf();
  if (!tool) GTEST_SKIP() << "node or obj2gltf missing (./tessera build installs obj2gltf into .node/)";
  TempDir dir("obj2gltf_quads");
  const auto settings = testing::source_dir() / "scene-packer/scenes/cornell_box.scene.txtpb";
  const auto obj_path = testing::scene_path("cornell_box/cornell_box.obj");
  const auto glb = convert(*tool, obj_path, dir / "cornell.glb");
  const auto a = pack(obj_path, dir / "obj.tpk", settings);
  const auto b = pack(glb, dir / "glb.tpk", settings);  // the settings' "light" material is found by name
  EXPECT_TRUE(b.warnings.empty()) << b.warnings.front();
  EXPECT_EQ(a.manifest.triangles(), b.manifest.triangles());
  EXPECT_LE(b.manifest.vertices(), a.manifest.vertices());
  EXPECT_EQ(a.manifest.bounds().SerializeAsString(), b.manifest.bounds().SerializeAsString());
  const PackedScene obj = PackedScene::load(dir / "obj.tpk"), gltf = PackedScene::load(dir / "glb.tpk");
  ImageRgba8 ib;
  const ImageRgba8 ia = render_both(obj, gltf, ib);
  EXPECT_GT(psnr_rgb(ia, ib), 45.0);
}

}  // namespace
}  // namespace tessera
