#include "common/scene/scene_motion.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/base/error.h"
#include "common/base/usage_error.h"
#include "common/scene/packed_scene.h"

namespace tessera {

Transform3x4 transform_of_matrix(const std::array<float, 16>& c) {
  Transform3x4 t;
  for (int row = 0; row < 3; ++row)
    for (int col = 0; col < 4; ++col) t.m[4 * row + col] = c[4 * col + row];
  return t;
}

SceneMotion::SceneMotion(anim::AnimatedScene nodes, std::vector<InstanceSource> instances, std::vector<Aabb> object_bounds,
                         std::string name)
    : nodes_(std::move(nodes)), sources_(std::move(instances)), object_bounds_(std::move(object_bounds)), name_(std::move(name)) {
  if (sources_.size() > kMaxInstances)
    throw Error(name_ + ": more than " + std::to_string(kMaxInstances) + " instances, the most a scene may hold");
  for (size_t i = 0; i < sources_.size(); ++i) {
    if (sources_[i].node >= nodes_.nodes.size())
      throw Error(name_ + ": instance " + std::to_string(i) + " names node " + std::to_string(sources_[i].node) + " of " +
                  std::to_string(nodes_.nodes.size()));
    if (sources_[i].object >= object_bounds_.size())
      throw Error(name_ + ": instance " + std::to_string(i) + " names object " + std::to_string(sources_[i].object) + " of " +
                  std::to_string(object_bounds_.size()));
  }
  std::vector<uint32_t> depth(nodes_.nodes.size(), 1);
  for (uint32_t n : nodes_.order) {  // parents first
    const int32_t parent = nodes_.nodes[n].parent;
    if (parent >= 0) depth[n] = depth[size_t(parent)] + 1;
    if (depth[n] > kMaxNodeDepth)
      throw Error(name_ + ": node " + std::to_string(n) + ": nested " + std::to_string(depth[n]) + " deep, more than the " +
                  std::to_string(kMaxNodeDepth) + " a scene may nest");
  }
  instances_.resize(sources_.size());
  for (size_t i = 0; i < sources_.size(); ++i) instances_[i] = {sources_[i].object, sources_[i].node, {}};
  scratch_ = instances_;
  overridden_.assign(sources_.size(), 0);
  set_time(0.0);
}

double SceneMotion::duration() const {
  double longest = 0.0;
  for (const auto& animation : nodes_.animations) longest = std::max(longest, double(animation.duration));
  return longest;
}

void SceneMotion::place(const anim::Pose& pose, std::vector<Instance>& out, const std::string& when) const {
  for (size_t i = 0; i < sources_.size(); ++i) {
    if (overridden_[i]) {
      out[i] = instances_[i];
      continue;
    }
    out[i].world = transform_of_matrix(pose.world[sources_[i].node]);
    if (const char* problem = transform_problem(out[i].world))
      throw Error(name_ + ": " + when + "instance " + std::to_string(i) + ": " + problem);
  }
}

void SceneMotion::set_time(double seconds) {
  char when[64];
  std::snprintf(when, sizeof when, "time %g s: ", seconds);
  if (!std::isfinite(seconds)) throw Error(name_ + ": the scene time is not a finite number of seconds");
  anim::Pose pose;
  if (!anim::evaluate(nodes_, seconds, playback_, pose)) throw Error(name_ + ": " + when + "a node's world matrix overflows");
  place(pose, scratch_, when);
  time_ = seconds;
  pose_ = std::move(pose);
  for (size_t i = 0; i < instances_.size(); ++i)
    if (!(scratch_[i].world == instances_[i].world)) {
      instances_[i].world = scratch_[i].world;
      changed_ = true;
    }
}

void SceneMotion::set_instance_transform(uint32_t index, const Transform3x4& world) {
  const std::string what = "instance " + std::to_string(index);
  if (index >= instances_.size())
    throw Error(what + ": no such instance (the scene has " + std::to_string(instances_.size()) + ")");
  check_transform(world, what);
  overridden_[index] = 1;
  if (!(instances_[index].world == world)) {
    instances_[index].world = world;
    changed_ = true;
  }
}

void SceneMotion::clear_instance_transform(uint32_t index) {
  if (index >= instances_.size() || !overridden_[index]) return;
  overridden_[index] = 0;
  const Transform3x4 posed = transform_of_matrix(pose_.world[sources_[index].node]);
  if (!(instances_[index].world == posed)) {
    instances_[index].world = posed;
    changed_ = true;
  }
}

void SceneMotion::clear_instance_transforms() {
  for (uint32_t i = 0; i < instances_.size(); ++i) clear_instance_transform(i);
}

const TopLevelBvh& SceneMotion::top_level() {
  if (changed_ || rebuilds_ == 0) {
    top_ = build_top_level(instances_, object_bounds_, name_);
    ++rebuilds_;
    changed_ = false;
  }
  return top_;
}

std::optional<SceneMotion> SceneMotion::of_scene(const PackedScene& scene, const std::string& name) {
  if (!scene.instanced()) return std::nullopt;
  std::vector<Aabb> bounds;
  for (const SceneObject& object : scene.objects()) bounds.push_back(object.bounds);
  return SceneMotion(scene.scene_nodes(), scene.instance_sources(), std::move(bounds), name);
}

InstanceTransform parse_instance_transform(std::string_view text) {
  const std::string label = "bad instance transform '" + std::string(text) + "'";
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0)
    throw UsageError(label + " (expected I:m00,m01,m02,m03,m10,...,m23: an instance and 12 numbers, row major)");
  InstanceTransform out;
  const std::string index(text.substr(0, colon));
  char* end = nullptr;
  const unsigned long long value = std::strtoull(index.c_str(), &end, 10);
  if (*end != '\0' || index[0] == '-' || value >= kMaxInstances) throw UsageError(label + ": '" + index + "' is not an instance index");
  out.index = uint32_t(value);
  std::string rest(text.substr(colon + 1));
  size_t start = 0;
  for (int i = 0; i < 12; ++i) {
    const size_t comma = rest.find(',', start);
    if ((i < 11) != (comma != std::string::npos)) throw UsageError(label + ": expected 12 comma-separated numbers");
    const std::string number = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    out.world.m[size_t(i)] = std::strtof(number.c_str(), &end);
    if (number.empty() || *end != '\0') throw UsageError(label + ": '" + number + "' is not a number");
    start = comma + 1;
  }
  if (const char* problem = transform_problem(out.world)) throw UsageError(label + ": " + problem);
  return out;
}

}  // namespace tessera
