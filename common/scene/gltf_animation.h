#pragma once
// glTF 2.0 animations of node transforms: channels that drive a node's translation, rotation or
// scale through a sampler (STEP, LINEAR, CUBICSPLINE), and the node hierarchy they move. The data
// here is what a scene carries; animation_player.h evaluates it at a scene time, animation_codec.h
// stores it in bytes. Both the glTF reader and the decoder end in validate_animations(), so every
// AnimatedScene that exists has passed the same checks: finite values, key times >= 0 and strictly
// increasing, value counts matching the keys, nodes in range, a forest of nodes no deeper than
// kMaxNodeDepth, and the limits below. Failures are one tessera::Error naming the animation and
// channel ("animation 'walk' (0) channel 2: ...").
//
// Morph-target weights and other targets are ignored with a warning; rotations must be float
// accessors (glTF also allows normalized integers, which are refused as a wrong accessor type).
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tinygltf {
class Model;
}

namespace tessera::anim {

// Limits: far beyond any real scene, small enough that a hostile file cannot exhaust memory.
inline constexpr uint32_t kMaxNodes = 1u << 20;
inline constexpr uint32_t kMaxNodeDepth = 1024;  // the glTF reader's limit too
inline constexpr uint32_t kMaxAnimations = 4096;
inline constexpr uint32_t kMaxChannels = 1u << 16;  // over all animations
inline constexpr uint32_t kMaxKeysPerChannel = 1u << 20;
inline constexpr uint64_t kMaxKeyFloats = 1ull << 26;  // times and values over all channels (256 MiB)
inline constexpr size_t kMaxNameBytes = 256;           // longer glTF names are cut
inline constexpr float kMaxSeconds = 1e9f;             // key times; keeps time arithmetic exact enough
inline constexpr float kMaxMagnitude = 1e15f;          // values and tangents; interpolation cannot overflow

enum class Target : uint8_t { translation = 0, rotation = 1, scale = 2 };
enum class Interpolation : uint8_t { step = 0, linear = 1, cubic_spline = 2 };

const char* target_name(Target target);                     // "translation", ...
const char* interpolation_name(Interpolation interpolation);  // "STEP", "LINEAR", "CUBICSPLINE"
inline int target_components(Target target) { return target == Target::rotation ? 4 : 3; }

// A node's local transform: translation, then rotation, then scale (glTF's T * R * S).
struct Trs {
  std::array<float, 3> translation{0.0f, 0.0f, 0.0f};
  std::array<float, 4> rotation{0.0f, 0.0f, 0.0f, 1.0f};  // unit quaternion x, y, z, w (glTF's order)
  std::array<float, 3> scale{1.0f, 1.0f, 1.0f};
  bool operator==(const Trs&) const = default;
};

struct Node {
  int32_t parent = -1;     // -1: a root
  bool has_matrix = false;  // given as a matrix: static (glTF animates only TRS nodes)
  std::array<float, 16> matrix{};  // column-major, where has_matrix
  Trs rest;                        // the pose without animation, where !has_matrix
  bool operator==(const Node&) const = default;
};

struct Channel {
  uint32_t node = 0;
  Target target = Target::translation;
  Interpolation interpolation = Interpolation::linear;
  std::vector<float> times;  // seconds
  // target_components() floats a key; cubic splines hold three such groups a key: in-tangent,
  // value, out-tangent (glTF's order).
  std::vector<float> values;
  bool operator==(const Channel&) const = default;
};

struct Animation {
  std::string name;
  std::vector<Channel> channels;
  float duration = 0.0f;  // derived: the last key time of any channel; it loops over [0, duration]
  bool operator==(const Animation&) const = default;
};

struct AnimatedScene {
  std::vector<Node> nodes;  // indexed as the glTF file's nodes
  std::vector<Animation> animations;
  // Derived by validate_animations():
  std::vector<uint32_t> order;  // every node, parents before children
  std::vector<uint8_t> moves;   // 1 where a channel drives the node or an ancestor
  std::vector<std::string> warnings;  // not stored by the codec
};

// Checks everything listed above and fills the derived fields; throws tessera::Error.
void validate_animations(AnimatedScene& scene);

// The animations of a parsed glTF model (with its whole node hierarchy). A file without
// animations gives an empty `animations` and its static nodes.
AnimatedScene animations_from_model(const tinygltf::Model& model);

// The same for a .gltf or .glb file; errors are prefixed with the file's name.
AnimatedScene read_gltf_animations(const std::filesystem::path& path);

}  // namespace tessera::anim
