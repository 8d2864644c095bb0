#include "instanced_pack_support.h"

#include <cmath>

#include "common/scene/scene_objects.h"
#include "kernels/accel/instance_traverse.h"

namespace tessera::testing {

int add_cube_mesh(AnimatedGltf& gltf, float size) {
  static const int faces[6][4][3] = {{{-1, -1, 1}, {1, -1, 1}, {1, 1, 1}, {-1, 1, 1}},     {{1, -1, -1}, {-1, -1, -1}, {-1, 1, -1}, {1, 1, -1}},
                                     {{1, -1, 1}, {1, -1, -1}, {1, 1, -1}, {1, 1, 1}},     {{-1, -1, -1}, {-1, -1, 1}, {-1, 1, 1}, {-1, 1, -1}},
                                     {{-1, 1, 1}, {1, 1, 1}, {1, 1, -1}, {-1, 1, -1}},     {{-1, -1, -1}, {1, -1, -1}, {1, -1, 1}, {-1, -1, 1}}};
  std::vector<float> positions;
  for (const auto& face : faces)
    for (int corner : {0, 1, 2, 0, 2, 3})
      for (int a = 0; a < 3; ++a) positions.push_back(0.5f * size * float(face[corner][a]));
  const int accessor = gltf.accessor(positions, "VEC3");
  const float h = 0.5f * size;
  gltf.json["accessors"][size_t(accessor)]["min"] = {-h, -h, -h};
  gltf.json["accessors"][size_t(accessor)]["max"] = {h, h, h};
  if (!gltf.json.contains("meshes")) gltf.json["meshes"] = nlohmann::json::array();
  gltf.json["meshes"].push_back({{"primitives", {{{"attributes", {{"POSITION", accessor}}}}}}});
  return int(gltf.json["meshes"].size()) - 1;
}

void add_default_scene(AnimatedGltf& gltf) {
  std::vector<bool> child(gltf.json["nodes"].size(), false);
  for (const auto& node : gltf.json["nodes"])
    if (node.contains("children"))
      for (const auto& c : node["children"]) child[c.get<size_t>()] = true;
  nlohmann::json roots = nlohmann::json::array();
  for (size_t n = 0; n < child.size(); ++n)
    if (!child[n]) roots.push_back(n);
  gltf.json["scenes"] = {{{"nodes", roots}}};
  gltf.json["scene"] = 0;
}

pack::PackOptions instanced_pack_options(const std::filesystem::path& input, const std::filesystem::path& output) {
  pack::PackOptions o;
  o.input = input;
  o.output = output;
  o.show_progress = false;
  o.instances = true;
  return o;
}

std::vector<HostRay> rays_around(const Aabb& box, int count) {
  std::vector<HostRay> rays;
  const float cx = 0.5f * (box.min[0] + box.max[0]), cy = 0.5f * (box.min[1] + box.max[1]), cz = 0.5f * (box.min[2] + box.max[2]);
  const float radius = 2.0f * std::max({box.extent(0), box.extent(1), box.extent(2)});
  for (int i = 0; i < count; ++i) {
    const float a = 6.2831853f * float(i % 61) / 61.0f, b = -1.2f + 2.4f * float(i % 37) / 37.0f;
    const float3 from = make_float3(cx + radius * std::cos(a) * std::cos(b), cy + radius * std::sin(b), cz + radius * std::sin(a) * std::cos(b));
    const float fx = float(i % 13) / 12.0f, fy = float(i % 7) / 6.0f, fz = float(i % 11) / 10.0f;
    const float3 to = make_float3(box.min[0] + fx * box.extent(0), box.min[1] + fy * box.extent(1), box.min[2] + fz * box.extent(2));
    rays.push_back({from, v3_normalize(v3_sub(to, from))});
  }
  return rays;
}

namespace {

TracedHit traced(const SceneView& view, bool found, const Hit& hit) {
  TracedHit out;
  out.found = found;
  if (!found) return out;
  out.t = hit.t;
  float3 p[3];
  scene_triangle_vertices(&view, hit.tri, &p[0], &p[1], &p[2]);
  for (int c = 0; c < 3; ++c) {
    out.corners[size_t(3 * c)] = p[c].x;
    out.corners[size_t(3 * c + 1)] = p[c].y;
    out.corners[size_t(3 * c + 2)] = p[c].z;
  }
  return out;
}

}  // namespace

std::vector<TracedHit> trace_flat(const PackedScene& scene, const std::vector<HostRay>& rays) {
  const SceneView view = scene.host_view();
  std::vector<TracedHit> hits;
  for (const HostRay& ray : rays) {
    Hit hit;
    const bool found = kd_intersect_closest(&view, ray.org, ray.dir, 0.0f, TS_INFINITY, &hit);
    hits.push_back(traced(view, found, hit));
  }
  return hits;
}

std::vector<TracedHit> trace_instanced(const PackedScene& scene, SceneMotion& motion, const std::vector<HostRay>& rays) {
  const SceneView view = scene.host_view();
  const TopLevelBvh& top = motion.top_level();
  const std::vector<uint32_t> objects = object_words(scene.objects());
  InstanceView instances{top.instance_count, top.nodes.data(), top.instances.data(), objects.data()};
  std::vector<TracedHit> hits;
  for (const HostRay& ray : rays) {
    Hit hit;
    uint32_t slot = TS_NO_INSTANCE;
    const bool found = instance_traverse(&view, &instances, ray.org, ray.dir, 0.0f, TS_INFINITY, 0, &hit, &slot);
    TracedHit out = traced(view, found, hit);
    if (found) out.instance = instance_id(&instances, slot);
    hits.push_back(out);
  }
  return hits;
}

Aabb world_bounds(const PackedScene& scene) {
  const auto& b = scene.instanced() ? scene.manifest().world_bounds() : scene.manifest().bounds();
  Aabb box;
  box.extend({b.min().x(), b.min().y(), b.min().z()});
  box.extend({b.max().x(), b.max().y(), b.max().z()});
  return box;
}

std::string grouped_boxes_obj(int first_vertex) {
  std::string obj;
  for (int g = 0; g < 3; ++g) {
    obj += "g part" + std::to_string(g) + "\n";
    const float x = 1.5f * float(g), s = 0.4f + 0.2f * float(g);
    for (int c = 0; c < 8; ++c)
      obj += "v " + std::to_string(x + ((c & 1) ? s : -s)) + " " + std::to_string((c & 2) ? s : -s) + " " +
             std::to_string((c & 4) ? s : -s) + "\n";
    const int quads[6][4] = {{0, 1, 3, 2}, {4, 6, 7, 5}, {0, 4, 5, 1}, {2, 3, 7, 6}, {0, 2, 6, 4}, {1, 5, 7, 3}};
    const int base = first_vertex + 8 * g;
    for (const auto& q : quads)
      obj += "f " + std::to_string(base + q[0]) + " " + std::to_string(base + q[1]) + " " + std::to_string(base + q[2]) + " " +
             std::to_string(base + q[3]) + "\n";
  }
  return obj;
}

}  // namespace tessera::testing
