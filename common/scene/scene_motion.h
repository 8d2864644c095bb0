#pragma once
// What moves in an instanced scene, on the worker and in tessera-render: the scene's node hierarchy
// and animations (the .tpk's SCENE_NODES section, docs/animation.md), its instances (a node placing
// an object) and the object boxes, posed at a scene time, with any instance optionally placed by an
// explicit transform instead (a frame request's grab). The top level of two-level traversal
// (top_level_bvh.h) is rebuilt only when something moved since it was last taken, so a renderer asks
//
//   motion.set_time(seconds);                      // the scene clock
//   motion.set_instance_transform(index, world);   // a grabbed object, until cleared
//   if (motion.changed()) upload(motion.top_level());
//
// once a frame. Every transform is checked as the packer checks it: a NaN or infinite entry or a
// zero scale is refused with one error and nothing changes.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/scene/aabb.h"
#include "common/scene/animation_player.h"
#include "common/scene/gltf_animation.h"
#include "common/scene/scene_nodes.h"
#include "common/scene/top_level_bvh.h"

namespace tessera {

class PackedScene;

class SceneMotion {
 public:
  // nodes: the hierarchy and its animations (validated); instances in the scene's order; bounds:
  // each object's object-space box. Throws Error("<name>: ...") for an instance naming a node or
  // object out of range, more than kMaxInstances, or a pose at time 0 with a refused transform.
  SceneMotion(anim::AnimatedScene nodes, std::vector<InstanceSource> instances, std::vector<Aabb> object_bounds,
              std::string name);

  // The motion of a loaded scene; nullopt for a scene without instances (single-level).
  static std::optional<SceneMotion> of_scene(const PackedScene& scene, const std::string& name);

  uint32_t instance_count() const { return uint32_t(instances_.size()); }
  bool animated() const { return !nodes_.animations.empty(); }
  // The longest animation's duration in seconds (0 when nothing is animated).
  double duration() const;

  // loop (the default) or clamp, for the times set from now on.
  void set_playback(anim::Playback playback) { playback_ = playback; }
  anim::Playback playback() const { return playback_; }

  // Poses every node at scene time `seconds` (instances placed by set_instance_transform keep
  // their transform). Throws Error("<name>: time S s: instance N: transform has ...") for a
  // non-finite time or a pose with a refused transform; the motion then stays as it was.
  void set_time(double seconds);
  double time() const { return time_; }

  // Places instance `index` (the scene's order) by `world` (object to world) until cleared.
  // Throws Error("instance N: ...") for an index out of range or a transform with a NaN or
  // infinite entry or scale 0; nothing changes then.
  void set_instance_transform(uint32_t index, const Transform3x4& world);
  // Back to the animated (or packed) placement.
  void clear_instance_transform(uint32_t index);
  void clear_instance_transforms();
  bool has_instance_transform(uint32_t index) const { return index < overridden_.size() && overridden_[index]; }

  // Every instance with its world transform now, in the scene's order.
  const std::vector<Instance>& instances() const { return instances_; }
  const std::vector<Aabb>& object_bounds() const { return object_bounds_; }

  // True when a transform differs from the top level last returned by top_level().
  bool changed() const { return changed_; }
  // The top level for the transforms now, rebuilt when changed(); clears changed().
  const TopLevelBvh& top_level();
  // How many times top_level() rebuilt (the first build included): a renderer's re-uploads.
  uint64_t rebuilds() const { return rebuilds_; }

 private:
  void place(const anim::Pose& pose, std::vector<Instance>& out, const std::string& when) const;

  anim::AnimatedScene nodes_;
  std::vector<InstanceSource> sources_;
  std::vector<Aabb> object_bounds_;
  std::string name_;
  anim::Playback playback_ = anim::Playback::loop;
  double time_ = 0.0;
  anim::Pose pose_;
  std::vector<Instance> instances_, scratch_;
  std::vector<uint8_t> overridden_;
  TopLevelBvh top_;
  bool changed_ = true;
  uint64_t rebuilds_ = 0;
};

// "I:m00,m01,m02,m03,m10,...,m23" (an instance index and a row-major 3x4 object-to-world matrix,
// tessera-render --instance-transform). Throws UsageError naming what is wrong; the matrix is
// checked with check_transform.
struct InstanceTransform {
  uint32_t index = 0;
  Transform3x4 world;
};
InstanceTransform parse_instance_transform(std::string_view text);

// A node's world matrix (column-major 4x4, the animation player's) as an object-to-world 3x4.
Transform3x4 transform_of_matrix(const std::array<float, 16>& column_major);

}  // namespace tessera
