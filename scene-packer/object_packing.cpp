#include "scene-packer/object_packing.h"

#include <algorithm>

#include "common/base/error.h"
#include "common/scene/animation_codec.h"
#include "common/scene/scene_motion.h"
#include "common/scene/scene_objects.h"

namespace tessera::pack {
namespace {

bool is_gltf(const std::filesystem::path& path) {
  const std::string name = path.string();
  return name.ends_with(".gltf") || name.ends_with(".glb");
}

// A scale key of 0 on any axis makes the object flat at that instant: the top level could not place it.
void refuse_zero_scale_keys(const anim::AnimatedScene& scene, const std::string& name) {
  for (size_t a = 0; a < scene.animations.size(); ++a) {
    const anim::Animation& animation = scene.animations[a];
    for (size_t c = 0; c < animation.channels.size(); ++c) {
      const anim::Channel& channel = animation.channels[c];
      if (channel.target != anim::Target::scale) continue;
      const bool cubic = channel.interpolation == anim::Interpolation::cubic_spline;
      for (size_t k = 0; k < channel.times.size(); ++k) {
        const float* value = &channel.values[(cubic ? 9 : 3) * k + (cubic ? 3 : 0)];
        if (value[0] == 0.0f || value[1] == 0.0f || value[2] == 0.0f)
          throw Error(name + ": animation '" + animation.name + "' (" + std::to_string(a) + ") channel " + std::to_string(c) +
                      ": key " + std::to_string(k) + " scales node " + std::to_string(channel.node) +
                      " to 0 (the object would be flat)");
      }
    }
  }
}

}  // namespace

anim::AnimatedScene object_nodes(const std::filesystem::path& input, const TriangleMesh& mesh) {
  if (is_gltf(input)) {
    anim::AnimatedScene scene = anim::read_gltf_animations(input);
    refuse_zero_scale_keys(scene, input.string());
    return scene;
  }
  anim::AnimatedScene scene;
  scene.nodes.resize(mesh.object_first_triangles.size());  // identity roots, one an object
  anim::validate_animations(scene);
  return scene;
}

bool worth_instancing(const TriangleMesh& mesh, const anim::AnimatedScene& nodes) {
  return mesh.instances.size() > 1 || (!mesh.instances.empty() && !nodes.animations.empty());
}

PackedObjects pack_objects(const QuantizedMesh& q, const std::vector<InstanceSource>& instances,
                           const anim::AnimatedScene& nodes, const KdBuildOptions& options, const std::string& name) {
  PackedObjects out;
  const uint32_t objects = uint32_t(q.object_first_triangles.size());
  std::vector<Aabb> bounds(objects);
  for (uint32_t o = 0; o < objects; ++o) {
    const uint32_t first = q.object_first_triangles[o];
    const uint32_t end = o + 1 < objects ? q.object_first_triangles[o + 1] : uint32_t(q.triangle_count());
    const std::span<const uint32_t> own(q.triangles.data() + 3 * size_t(first), 3 * size_t(end - first));
    PackedKdTree tree = build_kdtree(q.decoded_positions, own, options);
    offset_kd_triangles(tree.nodes, tree.leaf_refs, first);
    for (uint32_t v : own)
      bounds[o].extend({q.decoded_positions[3 * v], q.decoded_positions[3 * v + 1], q.decoded_positions[3 * v + 2]});
    out.object_words.insert(out.object_words.end(),
                            {uint32_t(out.kd_nodes.size() / 2), uint32_t(tree.nodes.size() / 2), uint32_t(out.kd_leaf_refs.size()),
                             uint32_t(tree.leaf_refs.size()), first, end - first});
    out.kd_nodes.insert(out.kd_nodes.end(), tree.nodes.begin(), tree.nodes.end());
    out.kd_leaf_refs.insert(out.kd_leaf_refs.end(), tree.leaf_refs.begin(), tree.leaf_refs.end());
    KdTreeStats& s = out.stats;
    s.inner_nodes_without_refs += tree.stats.inner_nodes_without_refs;
    s.inner_nodes_with_refs += tree.stats.inner_nodes_with_refs;
    s.leaves += tree.stats.leaves;
    s.empty_leaves += tree.stats.empty_leaves;
    s.leaf_references += tree.stats.leaf_references;
    s.inner_references += tree.stats.inner_references;
    s.max_depth = std::max(s.max_depth, tree.stats.max_depth);
    s.sah_cost += tree.stats.sah_cost;
  }
  // The instances as a worker will place them: counts, nesting, every transform at time 0.
  SceneMotion motion(nodes, instances, bounds, name);
  out.world_bounds = motion.top_level().bounds;
  for (const InstanceSource& instance : instances) out.instance_words.insert(out.instance_words.end(), {instance.node, instance.object});
  out.scene_nodes = anim::encode_animations(nodes);
  return out;
}

}  // namespace tessera::pack
