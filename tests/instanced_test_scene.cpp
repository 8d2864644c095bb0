#include "instanced_test_scene.h"

#include <cstring>

#include "common/scene/kd_compact_layout.h"
#include "common/scene/mesh_loader.h"
#include "scene-packer/kdtree_builder.h"
#include "test_helpers.h"

namespace tessera::testing {
namespace {

Aabb mesh_bounds(const std::vector<float>& positions, std::span<const uint32_t> triangles) {
  Aabb box;
  for (uint32_t v : triangles) box.extend({positions[3 * v], positions[3 * v + 1], positions[3 * v + 2]});
  return box;
}

void set_bounds(SceneView& view, const Aabb& box) {
  view.bounds_min_x = box.min[0], view.bounds_min_y = box.min[1], view.bounds_min_z = box.min[2];
  view.bounds_max_x = box.max[0], view.bounds_max_y = box.max[1], view.bounds_max_z = box.max[2];
}

SceneView float_view(const PlainMesh& mesh, const std::vector<uint32_t>& nodes, const std::vector<uint32_t>& refs) {
  SceneView view;
  std::memset(&view, 0, sizeof view);
  view.flags = 0;  // float positions
  view.triangle_count = uint32_t(mesh.triangles.size() / 3);
  view.positions = mesh.positions.data();
  view.triangles = mesh.triangles.data();
  view.kd_nodes = nodes.data();
  view.kd_leaf_refs = refs.data();
  return view;
}

}  // namespace

PlainMesh load_plain_mesh(const std::string& relative) {
  const TriangleMesh mesh = load_mesh(scene_path(relative));
  return {mesh.positions, mesh.triangles};
}

PlainMesh transformed(const PlainMesh& mesh, const Transform3x4& transform) {
  PlainMesh out = mesh;
  for (size_t v = 0; v < mesh.positions.size() / 3; ++v) {
    const auto p = transform.apply_point({mesh.positions[3 * v], mesh.positions[3 * v + 1], mesh.positions[3 * v + 2]});
    for (int a = 0; a < 3; ++a) out.positions[3 * v + a] = p[a];
  }
  return out;
}

PlainMesh concatenated(const std::vector<PlainMesh>& meshes) {
  PlainMesh out;
  for (const PlainMesh& m : meshes) {
    const uint32_t base = uint32_t(out.positions.size() / 3);
    out.positions.insert(out.positions.end(), m.positions.begin(), m.positions.end());
    for (uint32_t v : m.triangles) out.triangles.push_back(base + v);
  }
  return out;
}

FlatScene make_flat_scene(PlainMesh mesh) {
  FlatScene scene;
  scene.mesh = std::move(mesh);
  const pack::PackedKdTree tree = pack::build_kdtree(scene.mesh.positions, scene.mesh.triangles, {});
  scene.kd_leaf_refs = tree.leaf_refs;
  scene.kd_nodes = make_compact_kd_nodes(tree.nodes, tree.leaf_refs);
  scene.view = float_view(scene.mesh, scene.kd_nodes, scene.kd_leaf_refs);
  set_bounds(scene.view, mesh_bounds(scene.mesh.positions, scene.mesh.triangles));
  return scene;
}

InstancedScene make_instanced_scene(const std::vector<PlainMesh>& objects, const std::vector<Instance>& instances) {
  InstancedScene scene;
  scene.mesh = concatenated(objects);
  uint32_t triangle_base = 0;
  for (const PlainMesh& object : objects) {
    const uint32_t triangles = uint32_t(object.triangles.size() / 3);
    const std::span<const uint32_t> own(scene.mesh.triangles.data() + 3 * size_t(triangle_base), 3 * size_t(triangles));
    pack::PackedKdTree tree = pack::build_kdtree(scene.mesh.positions, own, {});
    offset_kd_triangles(tree.nodes, tree.leaf_refs, triangle_base);
    SceneObject placed;
    placed.kd_node_base = uint32_t(scene.kd_nodes.size() / 2);
    placed.kd_leaf_ref_base = uint32_t(scene.kd_leaf_refs.size());
    placed.bounds = mesh_bounds(scene.mesh.positions, own);
    const std::vector<uint32_t> nodes = make_compact_kd_nodes(tree.nodes, tree.leaf_refs);
    scene.kd_nodes.insert(scene.kd_nodes.end(), nodes.begin(), nodes.end());
    scene.kd_leaf_refs.insert(scene.kd_leaf_refs.end(), tree.leaf_refs.begin(), tree.leaf_refs.end());
    scene.objects.push_back(placed);
    scene.object_triangle_base.push_back(triangle_base);
    triangle_base += triangles;
  }
  scene.object_words = object_words(scene.objects);
  scene.view = float_view(scene.mesh, scene.kd_nodes, scene.kd_leaf_refs);
  scene.place(instances);
  return scene;
}

void InstancedScene::place(const std::vector<Instance>& placed) {
  std::vector<Aabb> bounds;
  for (const SceneObject& object : objects) bounds.push_back(object.bounds);
  top = build_top_level(placed, bounds, "test scene");
  instances.instance_count = top.instance_count;
  instances.tlas_nodes = top.nodes.data();
  instances.instances = top.instances.data();
  instances.objects = object_words.data();
  set_bounds(view, top.bounds);
}

}  // namespace tessera::testing
