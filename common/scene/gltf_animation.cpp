#include "common/scene/gltf_animation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tiny_gltf.h>
#include <utility>

#include "common/base/error.h"
#include "common/scene/gltf_accessor.h"
#include "common/scene/gltf_reader.h"

namespace tessera::anim {
namespace {

std::string animation_label(const std::string& name, size_t index) {
  return name.empty() ? "animation " + std::to_string(index) : "animation '" + name + "' (" + std::to_string(index) + ")";
}

std::string channel_label(const std::string& animation, size_t channel) {
  return animation + " channel " + std::to_string(channel);
}

bool sane(float v) { return std::isfinite(v) && std::fabs(v) <= kMaxMagnitude; }

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// Keys and values of one channel; `label` names it in errors. Returns the keys' float count.
uint64_t check_channel(const Channel& channel, const std::string& label, size_t node_count) {
  if (channel.node >= node_count)
    throw Error(label + " drives node " + std::to_string(channel.node) + " of " + std::to_string(node_count));
  if (uint8_t(channel.target) > 2) throw Error(label + ": unknown target " + std::to_string(int(channel.target)));
  if (uint8_t(channel.interpolation) > 2)
    throw Error(label + ": unknown interpolation " + std::to_string(int(channel.interpolation)));
  const bool cubic = channel.interpolation == Interpolation::cubic_spline;
  const size_t keys = channel.times.size();
  if (keys < (cubic ? 2u : 1u))
    throw Error(label + " has " + std::to_string(keys) + " keys (" + interpolation_name(channel.interpolation) + " needs " +
                (cubic ? "2" : "1") + ")");
  if (keys > kMaxKeysPerChannel)
    throw Error(label + " has " + std::to_string(keys) + " keys (at most " + std::to_string(kMaxKeysPerChannel) + ")");
  const size_t group = size_t(target_components(channel.target));
  const size_t per_key = group * (cubic ? 3 : 1);
  if (channel.values.size() != keys * per_key)
    throw Error(label + ": " + std::to_string(keys) + " key times but " + std::to_string(channel.values.size()) +
                " values (" + interpolation_name(channel.interpolation) + " " + target_name(channel.target) + " needs " +
                std::to_string(per_key) + " a key)");
  for (size_t k = 0; k < keys; ++k) {
    const float t = channel.times[k];
    if (!std::isfinite(t) || t < 0.0f || t > kMaxSeconds)
      throw Error(label + ": key " + std::to_string(k) + " has time " + number(t) + " (times are finite seconds from 0 to " +
                  number(kMaxSeconds) + ")");
    if (k > 0 && !(t > channel.times[k - 1]))
      throw Error(label + ": key times are not increasing (key " + std::to_string(k) + " at " + number(t) + " s follows " +
                  number(channel.times[k - 1]) + " s)");
  }
  for (size_t i = 0; i < channel.values.size(); ++i)
    if (!sane(channel.values[i]))
      throw Error(label + ": value " + std::to_string(i) + " is " + number(channel.values[i]) +
                  " (values are finite and within 1e15)");
  if (channel.target == Target::rotation)
    for (size_t k = 0; k < keys; ++k) {
      const float* q = &channel.values[k * per_key + (cubic ? 4 : 0)];
      if (!(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] > 0.0f))
        throw Error(label + ": key " + std::to_string(k) + " is a zero rotation quaternion");
    }
  return uint64_t(keys) + channel.values.size();
}

Error matrix_node_error(const std::string& label, uint32_t node) {
  return Error(label + " drives node " + std::to_string(node) +
               ", which has a matrix (glTF animates only translation/rotation/scale nodes)");
}

void normalize_rotation(std::array<float, 4>& q, const std::string& label) {
  const double length = std::sqrt(double(q[0]) * q[0] + double(q[1]) * q[1] + double(q[2]) * q[2] + double(q[3]) * q[3]);
  if (!(length > 0.0) || !std::isfinite(length)) throw Error(label + ": zero or non-finite rotation quaternion");
  for (float& c : q) c = float(c / length);
}

void check_nodes(std::vector<Node>& nodes) {
  if (nodes.size() > kMaxNodes)
    throw Error("the scene has " + std::to_string(nodes.size()) + " nodes (at most " + std::to_string(kMaxNodes) + ")");
  for (size_t n = 0; n < nodes.size(); ++n) {
    Node& node = nodes[n];
    const std::string label = "node " + std::to_string(n);
    if (node.parent < -1 || node.parent >= int64_t(nodes.size()) || node.parent == int64_t(n))
      throw Error(label + " has parent " + std::to_string(node.parent) + " of " + std::to_string(nodes.size()) + " nodes");
    bool ok = true;
    for (float v : node.matrix) ok &= sane(v);
    for (float v : node.rest.translation) ok &= sane(v);
    for (float v : node.rest.rotation) ok &= sane(v);
    for (float v : node.rest.scale) ok &= sane(v);
    if (!ok) throw Error(label + " has a non-finite or huge transform value");
    if (!node.has_matrix) normalize_rotation(node.rest.rotation, label);
  }
}

// Breadth-first from the roots: parents before children, depth counted, cycles left unreached.
std::vector<uint32_t> hierarchy_order(const std::vector<Node>& nodes) {
  const size_t n = nodes.size();
  std::vector<uint32_t> first_child(n + 1, 0), children(n, 0), order;
  for (const Node& node : nodes)
    if (node.parent >= 0) ++first_child[size_t(node.parent) + 1];
  for (size_t i = 0; i < n; ++i) first_child[i + 1] += first_child[i];
  std::vector<uint32_t> fill(first_child.begin(), first_child.end() - 1);
  for (size_t i = 0; i < n; ++i)
    if (nodes[i].parent >= 0) children[fill[size_t(nodes[i].parent)]++] = uint32_t(i);
  order.reserve(n);
  for (size_t i = 0; i < n; ++i)
    if (nodes[i].parent < 0) order.push_back(uint32_t(i));
  size_t level_end = order.size();
  uint32_t depth = 1;
  for (size_t at = 0; at < order.size(); ++at) {
    if (at == level_end) {
      level_end = order.size();
      if (++depth > kMaxNodeDepth) throw Error("the node hierarchy is deeper than " + std::to_string(kMaxNodeDepth));
    }
    const uint32_t node = order[at];
    for (uint32_t c = first_child[node]; c < first_child[node + 1]; ++c) order.push_back(children[c]);
  }
  if (order.size() != n) {
    std::vector<uint8_t> reached(n, 0);
    for (uint32_t i : order) reached[i] = 1;
    const size_t stuck = size_t(std::find(reached.begin(), reached.end(), 0) - reached.begin());
    throw Error("node " + std::to_string(stuck) + " is in a cycle of parents");
  }
  return order;
}

Trs rest_pose(const tinygltf::Node& node, const std::string& label) {
  Trs rest;
  const auto copy = [&](const std::vector<double>& from, float* to, size_t count, const char* what) {
    if (from.empty()) return;
    if (from.size() != count) throw Error(label + ": " + what + " needs " + std::to_string(count) + " numbers");
    for (size_t i = 0; i < count; ++i) to[i] = float(from[i]);
  };
  copy(node.translation, rest.translation.data(), 3, "translation");
  copy(node.rotation, rest.rotation.data(), 4, "rotation");
  copy(node.scale, rest.scale.data(), 3, "scale");
  return rest;
}

std::vector<Node> nodes_from_model(const tinygltf::Model& model) {
  if (model.nodes.size() > kMaxNodes)
    throw Error("the file has " + std::to_string(model.nodes.size()) + " nodes (at most " + std::to_string(kMaxNodes) + ")");
  std::vector<Node> nodes(model.nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    const tinygltf::Node& from = model.nodes[n];
    const std::string label = "node " + std::to_string(n);
    if (!from.matrix.empty()) {
      if (from.matrix.size() != 16) throw Error(label + ": matrix needs 16 numbers");
      nodes[n].has_matrix = true;
      for (size_t i = 0; i < 16; ++i) nodes[n].matrix[i] = float(from.matrix[i]);
    } else {
      nodes[n].rest = rest_pose(from, label);
    }
    for (int child : from.children) {
      if (child < 0 || size_t(child) >= nodes.size())
        throw Error(label + " names child " + std::to_string(child) + " of " + std::to_string(nodes.size()) + " nodes");
      if (nodes[size_t(child)].parent >= 0 || size_t(child) == n)
        throw Error("node " + std::to_string(child) + " has two parents or is its own child (nodes " +
                    std::to_string(nodes[size_t(child)].parent) + " and " + std::to_string(n) + ")");
      nodes[size_t(child)].parent = int32_t(n);
    }
  }
  return nodes;
}

bool parse_interpolation(const std::string& text, Interpolation* out) {
  if (text.empty() || text == "LINEAR") *out = Interpolation::linear;
  else if (text == "STEP") *out = Interpolation::step;
  else if (text == "CUBICSPLINE") *out = Interpolation::cubic_spline;
  else return false;
  return true;
}

// One glTF channel, or nothing (with a warning) where it drives what Tessera does not animate.
bool channel_from_model(const tinygltf::Model& model, const tinygltf::Animation& animation, const tinygltf::AnimationChannel& from,
                        const std::string& label, std::vector<std::string>& warnings, Channel* out) {
  if (from.target_path == "translation") out->target = Target::translation;
  else if (from.target_path == "rotation") out->target = Target::rotation;
  else if (from.target_path == "scale") out->target = Target::scale;
  else {
    warnings.push_back(from.target_path == "weights"
                           ? label + " animates morph-target weights, which are not supported (ignored)"
                           : label + " animates '" + from.target_path + "', which is not supported (ignored)");
    return false;
  }
  if (from.target_node < 0) {
    warnings.push_back(label + " names no node (ignored)");
    return false;
  }
  out->node = uint32_t(from.target_node);
  if (out->node >= model.nodes.size())
    throw Error(label + " drives node " + std::to_string(from.target_node) + " of " + std::to_string(model.nodes.size()));
  if (!model.nodes[out->node].matrix.empty())
    throw matrix_node_error(label, out->node);
  if (from.sampler < 0 || size_t(from.sampler) >= animation.samplers.size())
    throw Error(label + " names sampler " + std::to_string(from.sampler) + " of " + std::to_string(animation.samplers.size()));
  const tinygltf::AnimationSampler& sampler = animation.samplers[size_t(from.sampler)];
  if (!parse_interpolation(sampler.interpolation, &out->interpolation))
    throw Error(label + ": unknown interpolation '" + sampler.interpolation + "'");
  // Counts first: nothing is read from a hostile accessor before its size is known to be fine.
  const size_t keys = gltf::accessor_count(model, sampler.input, label + " input");
  if (keys > kMaxKeysPerChannel)
    throw Error(label + " has " + std::to_string(keys) + " keys (at most " + std::to_string(kMaxKeysPerChannel) + ")");
  const bool cubic = out->interpolation == Interpolation::cubic_spline;
  const size_t outputs = gltf::accessor_count(model, sampler.output, label + " output");
  if (outputs != keys * (cubic ? 3 : 1))
    throw Error(label + ": " + std::to_string(keys) + " key times but " + std::to_string(outputs) + " output elements (" +
                interpolation_name(out->interpolation) + " needs " + (cubic ? "3 a key" : "1 a key") + ")");
  out->times = gltf::read_floats(model, sampler.input, 1, false, label + " input");
  out->values = gltf::read_floats(model, sampler.output, target_components(out->target), false, label + " output");
  return true;
}

}  // namespace

const char* target_name(Target target) {
  switch (target) {
    case Target::translation: return "translation";
    case Target::rotation: return "rotation";
    case Target::scale: return "scale";
  }
  return "unknown";
}

const char* interpolation_name(Interpolation interpolation) {
  switch (interpolation) {
    case Interpolation::step: return "STEP";
    case Interpolation::linear: return "LINEAR";
    case Interpolation::cubic_spline: return "CUBICSPLINE";
  }
  return "unknown";
}

void validate_animations(AnimatedScene& scene) {
  check_nodes(scene.nodes);
  scene.order = hierarchy_order(scene.nodes);
  if (scene.animations.size() > kMaxAnimations)
    throw Error("the scene has " + std::to_string(scene.animations.size()) + " animations (at most " +
                std::to_string(kMaxAnimations) + ")");
  uint64_t channels = 0, floats = 0;
  std::map<std::pair<uint32_t, Target>, size_t> driver;  // (node, target) -> animation that drives it
  std::vector<uint8_t> driven(scene.nodes.size(), 0);
  for (size_t a = 0; a < scene.animations.size(); ++a) {
    Animation& animation = scene.animations[a];
    const std::string label = animation_label(animation.name, a);
    if (animation.name.size() > kMaxNameBytes)
      throw Error(label + ": its name is longer than " + std::to_string(kMaxNameBytes) + " bytes");
    channels += animation.channels.size();
    if (channels > kMaxChannels)
      throw Error(label + ": the scene has more than " + std::to_string(kMaxChannels) + " animation channels");
    animation.duration = 0.0f;
    for (size_t c = 0; c < animation.channels.size(); ++c) {
      const Channel& channel = animation.channels[c];
      const std::string where = channel_label(label, c);
      floats += check_channel(channel, where, scene.nodes.size());
      if (floats > kMaxKeyFloats)
        throw Error(where + ": the scene's animations hold more than " + std::to_string(kMaxKeyFloats) + " numbers");
      if (scene.nodes[channel.node].has_matrix)
        throw matrix_node_error(where, channel.node);
      const auto [it, first] = driver.try_emplace({channel.node, channel.target}, a);
      if (!first && it->second == a)
        throw Error(where + ": a second channel for node " + std::to_string(channel.node) + " " + target_name(channel.target));
      if (!first) {
        scene.warnings.push_back(animation_label(scene.animations[it->second].name, it->second) + " and " + label +
                                 " both drive node " + std::to_string(channel.node) + " " + target_name(channel.target) +
                                 ": the later one wins");
        it->second = a;
      }
      driven[channel.node] = 1;
      animation.duration = std::max(animation.duration, channel.times.back());
    }
  }
  scene.moves.assign(scene.nodes.size(), 0);
  for (uint32_t n : scene.order) {
    const int32_t parent = scene.nodes[n].parent;
    scene.moves[n] = driven[n] || (parent >= 0 && scene.moves[size_t(parent)]);
  }
}

AnimatedScene animations_from_model(const tinygltf::Model& model) {
  AnimatedScene scene;
  scene.nodes = nodes_from_model(model);
  if (model.animations.size() > kMaxAnimations)
    throw Error("the file has " + std::to_string(model.animations.size()) + " animations (at most " +
                std::to_string(kMaxAnimations) + ")");
  size_t channels = 0;
  for (size_t a = 0; a < model.animations.size(); ++a) {
    const tinygltf::Animation& from = model.animations[a];
    const std::string label = animation_label(from.name, a);
    channels += from.channels.size();
    if (channels > kMaxChannels) throw Error(label + ": the file has more than " + std::to_string(kMaxChannels) + " animation channels");
    Animation animation;
    animation.name = from.name.substr(0, kMaxNameBytes);
    for (size_t c = 0; c < from.channels.size(); ++c) {
      const std::string where = channel_label(label, c);
      Channel channel;
      if (!channel_from_model(model, from, from.channels[c], where, scene.warnings, &channel)) continue;
      check_channel(channel, where, scene.nodes.size());  // labelled with the file's channel index
      animation.channels.push_back(std::move(channel));
    }
    // Kept even when empty, so that animation indices stay the file's.
    if (animation.channels.empty()) scene.warnings.push_back(label + " moves nothing that is supported");
    scene.animations.push_back(std::move(animation));
  }
  std::vector<std::string> warnings = std::move(scene.warnings);
  validate_animations(scene);
  warnings.insert(warnings.end(), scene.warnings.begin(), scene.warnings.end());
  scene.warnings = std::move(warnings);
  return scene;
}

AnimatedScene read_gltf_animations(const std::filesystem::path& path) {
  std::vector<std::string> notices;
  const tinygltf::Model model = read_gltf_model(path, notices);
  try {
    AnimatedScene scene = animations_from_model(model);
    notices.insert(notices.end(), scene.warnings.begin(), scene.warnings.end());
    scene.warnings = std::move(notices);
    return scene;
  } catch (const Error& e) {
    throw Error(path.string() + ": " + e.what());
  }
}

}  // namespace tessera::anim
